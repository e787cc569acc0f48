import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, logsAt } from '../../src/logger.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/** The app-wide hooks Fastify runs on every request (its own registry: no public API lists them). */
function appHooks(
  app: FastifyInstance,
): Record<string, readonly ((...args: never[]) => unknown)[]> {
  const symbol = Object.getOwnPropertySymbols(app).find(
    (candidate) => candidate.description === 'fastify.hooks',
  );
  if (symbol === undefined) throw new Error("Fastify's hook registry was not found");
  return (app as unknown as Record<symbol, Record<string, (() => unknown)[]>>)[symbol] ?? {};
}

interface ErrorBody {
  error: { request_id: string; param?: string };
}

const isAsync = (hook: (...args: never[]) => unknown) => hook.constructor.name === 'AsyncFunction';

describeEachDialect('the hooks every request runs cost no promise, on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it('runs the app-wide per-request hooks synchronously, and they still refuse what they must', async () => {
    gateway = await startGateway(dialect);
    const hooks = appHooks(gateway.app);
    const perRequest = ['onRequest', 'preParsing', 'onSend', 'onResponse', 'onRequestAbort'];
    for (const name of perRequest) {
      expect(hooks[name]?.length, name).toBeGreaterThan(0);
      expect(hooks[name]?.filter(isAsync) ?? [], name).toEqual([]);
    }
    // A refusal thrown by a synchronous hook is answered in the error shape, as before.
    const { key } = await gateway.account(1_000_000);
    const inUrl = await gateway.app.inject({ method: 'GET', url: `/v1/models?api_key=${key}` });
    expect(inUrl.statusCode).toBe(401);
    expect(inUrl.headers['x-service-request-id']).toBe(inUrl.json<ErrorBody>().error.request_id);
    const latin1 = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] },
      headers: { 'content-type': 'application/json; charset=latin1' },
    });
    expect(latin1.statusCode).toBe(415);
    expect(latin1.json<ErrorBody>().error.param).toBe('Content-Type');
  });
});

describe('an access line is built only when it is written', () => {
  const sink = () => new Writable({ write: (_chunk, _encoding, done) => done() });

  it('says whether a logger, or a child of it, writes a level', () => {
    const warn = createLogger('warn', sink());
    expect(logsAt(warn, 'info')).toBe(false);
    expect(logsAt(warn.child({ reqId: 'req_1' }), 'info')).toBe(false);
    expect(logsAt(warn, 'error')).toBe(true);
    expect(logsAt(createLogger('info', sink()).child({ reqId: 'req_1' }), 'info')).toBe(true);
  });

  it('assumes a logger that cannot say writes every level (a line is never lost to the check)', () => {
    expect(logsAt({ info: () => undefined }, 'info')).toBe(true);
  });
});
