import { Writable } from 'node:stream';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { requestLoggerFactory } from '../../src/http/request-logger.js';
import { createLogger } from '../../src/logger.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/** A logger at `level` whose lines are collected, parsed, without their time. */
function capturedLogger(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n'))
        if (text !== '') {
          const { time: _time, ...line } = JSON.parse(text) as Record<string, unknown>;
          lines.push(line);
        }
      done();
    },
  });
  return { logger: createLogger(level, sink), lines };
}

/** Fastify's parent logger for requests, counting the children made of it. */
function countingParent(parent: FastifyBaseLogger) {
  let children = 0;
  const child = parent.child.bind(parent);
  parent.child = (...args: Parameters<FastifyBaseLogger['child']>) => {
    children += 1;
    return child(...args);
  };
  return { parent, children: () => children };
}

const makeRequestLogger = (parent: FastifyBaseLogger, bindings: Record<string, unknown>) =>
  requestLoggerFactory.call(
    undefined as unknown as FastifyInstance,
    parent,
    bindings,
    {},
    undefined as unknown as IncomingMessage,
  );

describe("a request's logger is made when it first writes", () => {
  it('makes no pino child for a request that writes no line, and one for a request that does', () => {
    const { logger } = capturedLogger('warn');
    const counted = countingParent(logger.child({}));
    const quiet = makeRequestLogger(counted.parent, { reqId: 'req_quiet' });
    quiet.info({ path: '/v1/models' }, 'request');
    quiet.debug('nothing');
    expect(counted.children()).toBe(0);

    const failing = makeRequestLogger(counted.parent, { reqId: 'req_failing' });
    failing.error({ err: new Error('boom') }, 'request failed');
    failing.warn('slow');
    expect(counted.children()).toBe(1);
  });

  it("writes every line as the pino child would, the request's id and redaction included", () => {
    const lazy = capturedLogger('info');
    const eager = capturedLogger('info');
    const bindings = { reqId: 'req_1' };
    const boom = new Error('boom');
    const write = (log: FastifyBaseLogger) => {
      log.info({ path: '/v1/chat/completions', status: 200 }, 'request');
      log.error({ err: boom, authorization: 'Bearer tgk_secret' }, 'request failed');
      log.child({ part: 'inner' }).warn('from a child');
    };
    write(makeRequestLogger(lazy.logger, bindings));
    write(eager.logger.child(bindings));
    expect(lazy.lines).toHaveLength(3);
    expect(lazy.lines).toEqual(eager.lines);
    expect(lazy.lines[1]).toMatchObject({ reqId: 'req_1', authorization: '[redacted]' });
  });

  it('answers level checks without making the child, as the child would answer them', () => {
    const { logger } = capturedLogger('warn');
    const counted = countingParent(logger.child({}));
    const log = makeRequestLogger(counted.parent, { reqId: 'req_2' }) as FastifyBaseLogger & {
      isLevelEnabled(level: string): boolean;
    };
    expect(log.level).toBe('warn');
    expect(log.isLevelEnabled('info')).toBe(false);
    expect(log.isLevelEnabled('error')).toBe(true);
    expect(counted.children()).toBe(0);
    // A level set on the request's logger is the child's own, as with pino.
    log.level = 'debug';
    expect(log.isLevelEnabled('debug')).toBe(true);
    expect(counted.parent.level).toBe('warn');
  });
});

describe('the access line through the gateway', () => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it("carries the request's id, the same as its X-Service-Request-Id", async () => {
    const { logger, lines } = capturedLogger('info');
    const [sqlite] = dialects;
    if (sqlite === undefined) throw new Error('no SQLite dialect');
    gateway = await startGateway(sqlite, { services: { logger } });
    const answer = await gateway.app.inject({ method: 'GET', url: '/healthz' });
    const requestId = answer.headers['x-service-request-id'];
    expect(typeof requestId).toBe('string');
    expect(lines.find((line) => line['msg'] === 'request')).toMatchObject({ reqId: requestId });
  });
});
