import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { redactSecrets } from '../../src/log-redaction.js';
import { createLogger } from '../../src/logger.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Risk: Claude Code's headers shut it out or change the answer silently: `x-api-key` refused, a
 * key sent there written to a log, a long `anthropic-beta` list forwarded to an upstream that is
 * not Anthropic's or dropped without a word, cache hints and capacity hints silently ignored.
 */
describeEachDialect('Claude Code headers on /v1/messages on $name', (dialect) => {
  let gateway: TestGateway;
  let key: string;
  const lines: string[] = [];
  beforeAll(async () => {
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => void (lines.push(chunk.toString()), done()),
    });
    gateway = await startGateway(dialect, { services: { logger: createLogger('trace', sink) } });
    ({ key } = await gateway.account(1_000_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  it('x-api-key authenticates as Bearer does, and the key never reaches a log', async () => {
    const response = await gateway.app.inject({
      method: 'POST',
      url: '/v1/messages?beta=true',
      headers: {
        'x-api-key': key,
        'idempotency-key': crypto.randomUUID(),
        'anthropic-version': '2031-12-31',
      },
      payload: { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(response.statusCode, response.body).toBe(200);
    // The same key in both headers is one key.
    const both = await gateway.call('POST', '/v1/messages/count_tokens', {
      key,
      headers: { 'x-api-key': key },
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(both.statusCode).toBe(200);
    // Outside Anthropic's routes the header is no credential, as before.
    const elsewhere = await gateway.call('GET', '/v1/models', { headers: { 'x-api-key': key } });
    expect(elsewhere.statusCode).toBe(401);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toContain(key.slice('tgk_'.length, 20));
    // A header written to a log by any code path is blotted out.
    expect(redactSecrets(`{"x-api-key":"${key}"}`)).not.toContain(key.slice(4));
    expect(redactSecrets(`x-api-key: opaque-token-1234567890`)).toBe('x-api-key: [redacted]');
  });

  it('anthropic-beta values, cache hints and service_tier are dropped and named', async () => {
    const response = await gateway.call('POST', '/v1/messages', {
      key,
      headers: {
        'anthropic-beta':
          'claude-code-20250219,interleaved-thinking-2025-05-14, fine-grained-tool-streaming-2025-05-14',
        'anthropic-version': '2023-06-01',
      },
      body: {
        model: 'sim-chat',
        max_tokens: 20,
        service_tier: 'auto',
        system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'hi' }],
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(String(response.headers['x-tollgate-dropped-fields']).split(', ')).toEqual([
      'cache_control',
      'service_tier',
      'anthropic-beta: claude-code-20250219',
      'anthropic-beta: interleaved-thinking-2025-05-14',
      'anthropic-beta: fine-grained-tool-streaming-2025-05-14',
    ]);
    const plain = await gateway.call('POST', '/v1/messages', {
      key,
      body: { model: 'sim-chat', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(plain.headers['x-tollgate-dropped-fields']).toBeUndefined();
  });
});
