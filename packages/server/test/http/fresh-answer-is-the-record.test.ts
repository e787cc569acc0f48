import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

// A fresh answer is sent as the JSON text written into its record (serialised once, issue 19):
// the risk is that the first answer and its replay then differ in bytes or in type.
describeEachDialect('a fresh answer is its record on $name', (dialect) => {
  let gateway: TestGateway;
  let key: string;
  beforeEach(async () => {
    gateway = await startGateway(dialect);
    ({ key } = await gateway.account(10_000_000));
  });
  afterEach(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  it.each([
    {
      path: '/v1/chat/completions',
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'héllo "quoted" \u2028' }] },
    },
    { path: '/v1/embeddings', body: { model: 'sim-embed', input: 'same bytes', dimensions: 8 } },
  ])('answers $path with the same bytes and type as its replay', async ({ path, body }) => {
    const idempotencyKey = randomUUID();
    const fresh = await gateway.call('POST', path, { key, body, idempotencyKey });
    const replay = await gateway.call('POST', path, { key, body, idempotencyKey });
    expect(fresh.statusCode).toBe(200);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(fresh.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(replay.headers['content-type']).toBe(fresh.headers['content-type']);
    expect(replay.body).toBe(fresh.body);
    const record = await gateway.services.store.db
      .selectFrom('requests')
      .select('response_body')
      .where('id', '=', String(fresh.headers['x-service-request-id']))
      .executeTakeFirstOrThrow();
    expect(record.response_body).toBe(fresh.body);
    expect(Number(fresh.headers['content-length'])).toBe(Buffer.byteLength(fresh.body));
  });
});
