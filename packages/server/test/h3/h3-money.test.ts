import { randomUUID } from 'node:crypto';
import type { H3Task } from '@tollgate/protocol';
import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, type TestGateway } from '../helpers/gateway.js';
import { startTaskGateway } from '../helpers/tasks.js';
import {
  countCreated,
  finishedH3,
  h3Quote,
  h3QuoteAndSubmit,
  h3SettleBody,
  submitBody,
  type H3Input,
} from '../helpers/h3.js';

/**
 * Risk: H3 money taken twice, taken for a failure nobody billed, taken at a changed price, or
 * settled with the image/video word; a refresh that submits the work again. Each test asserts
 * statuses, the balance to the micro-yuan, the upstream submissions and a clean ledger.
 */

const generate = (prompt = 'a kite over a beach'): H3Input => ({
  action: 'generate',
  prompt,
  parameters: { resolution: '720p', duration: 4 },
});

async function submissions(gateway: TestGateway): Promise<number> {
  return (await gateway.services.metrics.taskSubmissions.get()).values[0]?.value ?? 0;
}

describeEachDialect('H3 money on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  it('quote, then a price change, then submit: 409 PRICE_CHANGED and nothing created', async () => {
    gateway = await startTaskGateway(dialect);
    const { accountId, key } = await gateway.account(10_000_000);
    const quote = await h3Quote(gateway, key, generate());
    const current = (await gateway.admin('GET', '/admin/v1/models/sim-h3/prices'))['data'] as {
      prices: Record<string, unknown>;
    }[];
    const latest = current[current.length - 1]?.prices ?? {};
    const changed = await gateway.app.inject({
      method: 'PUT',
      url: '/admin/v1/models/sim-h3/prices',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: {
        ...latest,
        h3_per_second: { '480p': 20_000, '720p': 45_000, '1080p': 80_000, '2K': 120_000 },
      },
    });
    expect(changed.statusCode, changed.body).toBeLessThan(300);
    const before = await countCreated(gateway);
    const response = await gateway.call('POST', '/v1/h3/tasks', {
      key,
      body: submitBody(generate(), quote),
    });
    expect(response.statusCode, response.body).toBe(409);
    expect(response.json()).toMatchObject({
      error: { code: 'PRICE_CHANGED', param: 'expected_price_version' },
    });
    expect(await countCreated(gateway)).toEqual(before);
    expect(await gateway.balance(accountId)).toEqual({
      balance: 10_000_000,
      held: 0,
      available: 10_000_000,
    });
    // Quoting again gives the new price, and that submit goes through.
    const requoted = await h3Quote(gateway, key, generate());
    expect(requoted.quoted_amount).toBe(4 * 45_000);
    expect(requoted.price_version).not.toBe(quote.price_version);
  });

  it('402 creates nothing; after a top-up the same submit (same Idempotency-Key) is accepted', async () => {
    gateway = await startTaskGateway(dialect);
    const { accountId, key } = await gateway.account(100_000);
    const quote = await h3Quote(gateway, key, generate());
    expect(quote.quoted_amount).toBe(160_000);
    const idempotencyKey = randomUUID();
    const body = submitBody(generate(), quote);
    const before = await countCreated(gateway);
    const poor = await gateway.call('POST', '/v1/h3/tasks', { key, idempotencyKey, body });
    expect(poor.statusCode, poor.body).toBe(402);
    expect(await countCreated(gateway)).toEqual(before);
    await gateway.admin('POST', `/admin/v1/accounts/${accountId}/topups`, {
      amount: 100_000,
      reference: randomUUID(),
    });
    const accepted = await gateway.call('POST', '/v1/h3/tasks', { key, idempotencyKey, body });
    expect(accepted.statusCode, accepted.body).toBe(202);
    expect(await gateway.balance(accountId)).toEqual({
      balance: 200_000,
      held: 160_000,
      available: 40_000,
    });
    // The same key and body replays the original task; another body under it is a conflict.
    const replay = await gateway.call('POST', '/v1/h3/tasks', { key, idempotencyKey, body });
    expect(replay.statusCode).toBe(202);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json<H3Task>().id).toBe(accepted.json<H3Task>().id);
    const conflict = await gateway.call('POST', '/v1/h3/tasks', {
      key,
      idempotencyKey,
      body: { ...body, prompt: 'other' },
    });
    expect(conflict.statusCode).toBe(409);
    const task = await finishedH3(gateway, key, accepted.json<H3Task>().id);
    const settled = await gateway.call('POST', `/v1/h3/tasks/${task.id}/settle`, {
      key,
      body: h3SettleBody(task),
    });
    expect(settled.statusCode).toBe(200);
  });

  it('FAILED with a billed failure settles exactly that amount; FAILED unbilled is released', async () => {
    gateway = await startTaskGateway(dialect);
    const { accountId, key } = await gateway.account(10_000_000);
    const billed = await h3QuoteAndSubmit(gateway, key, generate('storm [sim:task=fail_billed]'));
    const unbilled = await h3QuoteAndSubmit(gateway, key, generate('storm [sim:task=fail]'));
    const billedTask = await finishedH3(gateway, key, billed.response.json<H3Task>().id);
    const unbilledTask = await finishedH3(gateway, key, unbilled.response.json<H3Task>().id);

    expect(unbilledTask).toMatchObject({
      status: 'FAILED',
      billing: { settlement_pending: false, state: 'released', settled_amount: 0 },
      error: { code: expect.any(String) },
    });
    expect(unbilledTask.settlement).toBeUndefined();
    expect(billedTask).toMatchObject({
      status: 'FAILED',
      billing: { settlement_pending: true, state: 'pending', actual_amount: 160_000 },
      settlement: { url: `/v1/h3/tasks/${billedTask.id}/settle` },
    });
    expect(await gateway.balance(accountId)).toMatchObject({ held: 160_000 });
    const refusedUnbilled = await gateway.call('POST', `/v1/h3/tasks/${unbilledTask.id}/settle`, {
      key,
      body: {
        actual_amount: 160_000,
        price_version: unbilledTask.billing.price_version,
        confirmation: 'settle_original_h3',
      },
    });
    expect(refusedUnbilled.statusCode).toBe(409);
    const settled = await gateway.call('POST', `/v1/h3/tasks/${billedTask.id}/settle`, {
      key,
      body: h3SettleBody(billedTask),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    expect(settled.json()).toMatchObject({ status: 'FAILED', billing: { state: 'settled' } });
    expect(await gateway.balance(accountId)).toEqual({
      balance: 10_000_000 - 160_000,
      held: 0,
      available: 10_000_000 - 160_000,
    });
  });

  it('settle takes only settle_original_h3 and the exact body; 50 concurrent settles charge once', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { accountId, key } = await client.account(10_000_000);
    const { response } = await h3QuoteAndSubmit(client, key, generate('[sim:deliver_seconds=2]'));
    const task = await finishedH3(client, key, response.json<H3Task>().id);
    const url = `/v1/h3/tasks/${task.id}/settle`;
    const body = h3SettleBody(task);
    const wrongWord = await client.call('POST', url, {
      key,
      body: { ...body, confirmation: 'settle_original_approved' },
    });
    expect(wrongWord.statusCode).toBe(400);
    expect(wrongWord.json()).toMatchObject({
      error: {
        code: 'INVALID_INPUT',
        param: 'body.confirmation',
        message: expect.stringContaining('settle_original_h3'),
      },
    });
    for (const bad of [
      { ...body, actual_amount: task.quote.quoted_amount },
      { ...body, price_version: 'sim-h3@0' },
      { ...body, prompt: 'again' },
    ]) {
      const refused = await client.call('POST', url, { key, body: bad });
      expect([400, 409], refused.body).toContain(refused.statusCode);
    }
    const withQuery = await client.call('POST', `${url}?force=1`, { key, body });
    expect(withQuery.statusCode).toBe(400);
    expect(await client.balance(accountId)).toMatchObject({ balance: 10_000_000, held: 160_000 });

    const results = await Promise.all(
      Array.from({ length: 50 }, () => client.call('POST', url, { key, body })),
    );
    const statuses = results.map((result) => result.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status !== 200 && status !== 409)).toEqual([]);
    expect(task.billing.actual_amount).toBe(80_000);
    expect(await client.balance(accountId)).toEqual({
      balance: 10_000_000 - 80_000,
      held: 0,
      available: 10_000_000 - 80_000,
    });
  });

  it('refresh asks the upstream for an accepted task but never submits again, and is throttled per task', async () => {
    const { clock } = (gateway = await startTaskGateway(dialect));
    const { key } = await gateway.account(10_000_000);
    const { response } = await h3QuoteAndSubmit(gateway, key, generate('[sim:task_seconds=2]'));
    const id = response.json<H3Task>().id;
    // Queued, not accepted yet: a refresh reads the stored state and asks nothing.
    const queued = await gateway.call('GET', `/v1/h3/tasks/${id}?refresh=true`, { key });
    expect(queued.json<H3Task>().status).toBe('queued');
    expect(await submissions(gateway)).toBe(0);
    await gateway.services.taskWorker.tick();
    expect(await submissions(gateway)).toBe(1);
    const running = await gateway.call('GET', `/v1/h3/tasks/${id}?refresh=true`, { key });
    expect(running.statusCode).toBe(200);
    expect(running.json<H3Task>().status).toBe('running');
    const throttled = await gateway.call('GET', `/v1/h3/tasks/${id}?refresh=true`, { key });
    expect(throttled.statusCode).toBe(429);
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // A plain read is never throttled, and asks nothing.
    expect((await gateway.call('GET', `/v1/h3/tasks/${id}`, { key })).statusCode).toBe(200);
    let task = running.json<H3Task>();
    const deadline = Date.now() + 15_000;
    while (task.status === 'running' && Date.now() < deadline) {
      // Past the refresh interval (judged by the gateway's clock, which the job's progress shares).
      clock.advance(2_100);
      const refreshed = await gateway.call('GET', `/v1/h3/tasks/${id}?refresh=true`, { key });
      expect(refreshed.statusCode, refreshed.body).toBe(200);
      task = refreshed.json<H3Task>();
    }
    // Finished by refreshes alone (the worker ticked once, to submit).
    expect(task.status).toBe('succeeded');
    expect(task.billing.settlement_pending).toBe(true);
    expect(await submissions(gateway)).toBe(1);
    const badQuery = await gateway.call('GET', `/v1/h3/tasks/${id}?refresh=yes`, { key });
    expect(badQuery.statusCode).toBe(400);
    const settled = await gateway.call('POST', `/v1/h3/tasks/${id}/settle`, {
      key,
      body: h3SettleBody(task),
    });
    expect(settled.statusCode).toBe(200);
  });
});
