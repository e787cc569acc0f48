import { randomUUID } from 'node:crypto';
import { afterEach, expect, it, vi } from 'vitest';
import { OpenAiEmbeddings } from '../../src/providers/openai-compatible/embeddings.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, embeddingsOnlyConfig, type TestGateway } from '../helpers/gateway.js';

/** 1 micro-yuan per token makes amounts easy to reason about. */
const config = embeddingsOnlyConfig(1_000_000);

describeEachDialect('usage above the hold on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it('keeps the result awaiting funds, then settles the original after a top-up without regenerating', async () => {
    gateway = await startGateway(dialect, { config });
    // More than the hold's estimate, less than the credible bound (twice it): billed in full.
    const input = 'hello world [sim:extra_tokens=50]';
    const reserve = Buffer.byteLength(input) + 8;
    const { accountId, key } = await gateway.account(reserve);
    const upstreamCalls = vi.spyOn(OpenAiEmbeddings.prototype, 'embed');
    const idempotencyKey = randomUUID();

    const first = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input },
      idempotencyKey,
    });
    expect(first.statusCode).toBe(402);
    expect(first.json()).toMatchObject({ error: { code: 'INSUFFICIENT_FUNDS' } });
    const requestId = String(first.headers['x-service-request-id']);

    const waiting = (await gateway.call('GET', `/v1/requests/${requestId}`, { key })).json<
      Record<string, unknown> & { bill: { amount: number } }
    >();
    expect(waiting).toMatchObject({
      status: 'awaiting_funds',
      canSettle: true,
      result: null,
      http_status: 402,
      reserve: { amount: reserve, state: 'open' },
      settlement: { url: `/v1/requests/${requestId}/settle` },
    });
    const cost = waiting.bill.amount;
    expect(cost).toBeGreaterThan(reserve);
    expect(cost).toBeLessThanOrEqual(2 * reserve);
    expect(await gateway.balance(accountId)).toEqual({
      balance: reserve,
      held: reserve,
      available: 0,
    });

    // Replaying the original while it waits says the same thing and calls nobody.
    const replay = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input },
      idempotencyKey,
    });
    expect(replay.statusCode).toBe(402);
    expect(replay.headers['idempotent-replayed']).toBe('true');

    // Settling before the top-up: still 402, nothing changes.
    const early = await gateway.call('POST', `/v1/requests/${requestId}/settle`, { key });
    expect(early.statusCode).toBe(402);
    expect(await gateway.balance(accountId)).toEqual({
      balance: reserve,
      held: reserve,
      available: 0,
    });

    await gateway.admin('POST', `/admin/v1/accounts/${accountId}/topups`, {
      amount: cost,
      reference: 'top-up for settle',
    });
    const settleKey = randomUUID();
    const settled = await gateway.call('POST', `/v1/requests/${requestId}/settle`, {
      key,
      idempotencyKey: settleKey,
    });
    expect(settled.statusCode).toBe(200);
    expect(settled.json()).toMatchObject({
      status: 'succeeded',
      canSettle: false,
      bill: { amount: cost, captured: true },
    });
    expect(settled.json<{ result: { data: unknown[] } }>().result.data).toHaveLength(1);
    expect(await gateway.balance(accountId)).toEqual({
      balance: reserve,
      held: 0,
      available: reserve,
    });
    expect(upstreamCalls).toHaveBeenCalledTimes(1);

    // Settling again never charges twice: a retry of the same settle replays, a new one is refused.
    const retried = await gateway.call('POST', `/v1/requests/${requestId}/settle`, {
      key,
      idempotencyKey: settleKey,
    });
    expect(retried.statusCode).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    const again = await gateway.call('POST', `/v1/requests/${requestId}/settle`, { key });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: { code: 'SETTLEMENT_NOT_ALLOWED' } });
    expect(await gateway.balance(accountId)).toEqual({
      balance: reserve,
      held: 0,
      available: reserve,
    });

    const final = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input },
      idempotencyKey,
    });
    expect(final.statusCode).toBe(200);
    expect(final.json()).toEqual(settled.json<{ result: unknown }>().result);
  });

  it('refuses a settle with a body or on a request that does not await funds', async () => {
    gateway = await startGateway(dialect, { config });
    const { key } = await gateway.account(1_000_000);
    const done = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'paid' },
    });
    const requestId = String(done.headers['x-service-request-id']);
    const withBody = await gateway.call('POST', `/v1/requests/${requestId}/settle`, {
      key,
      body: { amount: 1 },
    });
    expect(withBody.statusCode).toBe(400);
    expect(withBody.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'body' } });
    const notWaiting = await gateway.call('POST', `/v1/requests/${requestId}/settle`, { key });
    expect(notWaiting.statusCode).toBe(409);
    expect(notWaiting.json()).toMatchObject({ error: { code: 'SETTLEMENT_NOT_ALLOWED' } });
  });
});
