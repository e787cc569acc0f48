import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

describeEachDialect('idempotency rules on $name', (dialect) => {
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  beforeEach(async () => {
    gateway = await startGateway(dialect);
    ({ key, accountId } = await gateway.account(10_000_000));
  });
  afterEach(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  it('refuses a business POST without an Idempotency-Key, storing and charging nothing', async () => {
    const response = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'x' },
      idempotencyKey: null,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      error: { code: 'INVALID_INPUT', param: 'Idempotency-Key' },
    });
    expect(response.headers['x-service-request-id']).toMatch(/^req_/);
    expect(
      await gateway.services.store.db.selectFrom('requests').select('id').execute(),
    ).toHaveLength(0);
    expect((await gateway.balance(accountId)).balance).toBe(10_000_000);
  });

  it('refuses an Idempotency-Key that is not a UUID', async () => {
    const response = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'x' },
      idempotencyKey: 'abc',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      error: { code: 'INVALID_INPUT', param: 'Idempotency-Key' },
    });
  });

  it('answers 409 IDEMPOTENCY_CONFLICT when the same key comes with another body, charging once', async () => {
    const idempotencyKey = randomUUID();
    const first = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'first' },
      idempotencyKey,
    });
    expect(first.statusCode).toBe(200);
    const before = await gateway.balance(accountId);
    const second = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'second' },
      idempotencyKey,
    });
    expect(second.statusCode).toBe(409);
    expect(second.json()).toMatchObject({ error: { code: 'IDEMPOTENCY_CONFLICT' } });
    expect(await gateway.balance(accountId)).toEqual(before);
  });

  it('treats the same body with keys in another order as the same request', async () => {
    const idempotencyKey = randomUUID();
    const first = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'same', dimensions: 16 },
      idempotencyKey,
    });
    const second = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { dimensions: 16, input: 'same', model: 'sim-embed' },
      idempotencyKey,
    });
    expect(second.statusCode).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers['x-service-request-id']).toBe(first.headers['x-service-request-id']);
  });

  it('scopes idempotency keys per API key: another key with the same idempotency key is a new request', async () => {
    const other = await gateway.newKey(accountId);
    const idempotencyKey = randomUUID();
    const body = { model: 'sim-embed', input: 'shared key' };
    const first = await gateway.call('POST', '/v1/embeddings', { key, body, idempotencyKey });
    const second = await gateway.call('POST', '/v1/embeddings', {
      key: other.key,
      body,
      idempotencyKey,
    });
    expect(second.statusCode).toBe(200);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.headers['x-service-request-id']).not.toBe(first.headers['x-service-request-id']);
  });

  it('records nothing for a 402 before generation, so the same key works after a top-up', async () => {
    const poor = await gateway.account(0);
    const idempotencyKey = randomUUID();
    const body = { model: 'sim-embed', input: 'costly enough' };
    const refused = await gateway.call('POST', '/v1/embeddings', {
      key: poor.key,
      body,
      idempotencyKey,
    });
    expect(refused.statusCode).toBe(402);
    const lookup = await gateway.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
      key: poor.key,
    });
    expect(lookup.statusCode).toBe(404);
    await gateway.admin('POST', `/admin/v1/accounts/${poor.accountId}/topups`, {
      amount: 1_000_000,
      reference: 'later',
    });
    const accepted = await gateway.call('POST', '/v1/embeddings', {
      key: poor.key,
      body,
      idempotencyKey,
    });
    expect(accepted.statusCode).toBe(200);
  });

  it('finds the original record by idempotency key, with the exact bill', async () => {
    const idempotencyKey = randomUUID();
    const response = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'one two three' },
      idempotencyKey,
    });
    const usage = response.json<{ usage: { prompt_tokens: number } }>().usage;
    const record = await gateway.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
      key,
    });
    expect(record.statusCode).toBe(200);
    const expectedAmount = Math.ceil((usage.prompt_tokens * 500_000) / 1_000_000);
    expect(record.json()).toMatchObject({
      id: response.headers['x-service-request-id'],
      status: 'succeeded',
      http_status: 200,
      canSettle: false,
      usage: { prompt_tokens: usage.prompt_tokens },
      bill: {
        amount: expectedAmount,
        currency: 'CNY_MICRO',
        price_version: 'sim-embed@1',
        captured: true,
      },
      reserve: { state: 'captured' },
      result: response.json(),
    });
    expect((await gateway.balance(accountId)).balance).toBe(10_000_000 - expectedAmount);
  });
});
