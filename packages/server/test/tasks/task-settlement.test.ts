import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';
import { finishedTask, settleBodyOf, startTaskGateway, type TaskBody } from '../helpers/tasks.js';

/** A succeeded image task awaiting settlement, and its owner. */
async function pricedImageTask(gateway: TestGateway, balance = 100_000_000) {
  const owner = await gateway.account(balance);
  const created = await gateway.call('POST', '/v1/images/generations', {
    key: owner.key,
    body: { model: 'sim-image', prompt: 'a lighthouse', size: '256x256' },
  });
  expect(created.statusCode, created.body).toBe(202);
  const path = `/v1/images/${created.json<TaskBody>().id}`;
  const task = await finishedTask(gateway, owner.key, path);
  expect(task.billing.settlement_pending).toBe(true);
  return { ...owner, path, task };
}

describeEachDialect('settling a task on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it('every rule of spec 4.3 broken one at a time is refused and changes nothing', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { accountId, key, path, task } = await pricedImageTask(client);
    const good = settleBodyOf(task);
    const before = await client.balance(accountId);
    const raw = (payload: string, contentType: string, url = `${path}/settle`) =>
      client.app.inject({
        method: 'POST',
        url,
        headers: {
          authorization: `Bearer ${key}`,
          'idempotency-key': randomUUID(),
          'content-type': contentType,
        },
        payload,
      });
    const cases: [string, Promise<{ statusCode: number; json: () => unknown }>, number, string][] =
      [
        ['text/plain body', raw(JSON.stringify(good), 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
        [
          'over 4096 bytes',
          raw(JSON.stringify({ ...good, pad: 'x'.repeat(5_000) }), 'application/json'),
          413,
          'BODY_TOO_LARGE',
        ],
        [
          'a query string',
          raw(JSON.stringify(good), 'application/json', `${path}/settle?x=1`),
          400,
          'INVALID_INPUT',
        ],
        ['no body', raw('', 'application/json'), 400, 'INVALID_INPUT'],
        [
          'missing actual_amount',
          raw(JSON.stringify({ ...good, actual_amount: undefined }), 'application/json'),
          400,
          'INVALID_INPUT',
        ],
        [
          'missing price_version',
          raw(JSON.stringify({ ...good, price_version: undefined }), 'application/json'),
          400,
          'INVALID_INPUT',
        ],
        [
          'missing confirmation',
          raw(JSON.stringify({ ...good, confirmation: undefined }), 'application/json'),
          400,
          'INVALID_INPUT',
        ],
        [
          'an extra field (model)',
          raw(JSON.stringify({ ...good, model: 'sim-image' }), 'application/json'),
          400,
          'INVALID_INPUT',
        ],
        [
          'an extra field (prompt)',
          raw(JSON.stringify({ ...good, prompt: 'again' }), 'application/json'),
          400,
          'INVALID_INPUT',
        ],
        [
          'amount as a string',
          raw(
            JSON.stringify({ ...good, actual_amount: String(good.actual_amount) }),
            'application/json',
          ),
          400,
          'INVALID_INPUT',
        ],
        [
          'a fractional amount',
          raw(JSON.stringify({ ...good, actual_amount: 1.5 }), 'application/json'),
          400,
          'INVALID_INPUT',
        ],
        [
          'the H3 confirmation word',
          raw(JSON.stringify({ ...good, confirmation: 'settle_original_h3' }), 'application/json'),
          400,
          'INVALID_INPUT',
        ],
        [
          'another amount',
          raw(
            JSON.stringify({ ...good, actual_amount: (good.actual_amount ?? 0) + 1 }),
            'application/json',
          ),
          409,
          'SETTLEMENT_MISMATCH',
        ],
        [
          'another price version',
          raw(JSON.stringify({ ...good, price_version: 'sim-image@999' }), 'application/json'),
          409,
          'SETTLEMENT_MISMATCH',
        ],
      ];
    for (const [name, pending, status, code] of cases) {
      const response = await pending;
      expect(response.statusCode, name).toBe(status);
      expect(response.json(), name).toMatchObject({ error: { code } });
    }
    const noKey = await client.app.inject({
      method: 'POST',
      url: `${path}/settle`,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(good),
    });
    expect(noKey.statusCode).toBe(400);
    expect(await client.balance(accountId)).toEqual(before);
    const unchanged = (await client.call('GET', path, { key })).json<TaskBody>();
    expect(unchanged.billing).toEqual(task.billing);
    // And the right body still settles.
    const settled = await client.call('POST', `${path}/settle`, { key, body: good });
    expect(settled.statusCode).toBe(200);
  });

  it('the quoted amount sent instead of the actual one is refused, naming the rule', async () => {
    gateway = await startTaskGateway(dialect);
    const { key, path, task } = await pricedImageTask(gateway);
    // A quote of two images, one delivered: actual < quoted.
    await gateway.services.store.db
      .updateTable('tasks')
      .set({ quoted_amount: (task.billing.actual_amount ?? 0) * 2 })
      .where('id', '=', task.id)
      .execute();
    // Keep the hold equal to the quote so the ledger stays consistent for this case.
    const refused = await gateway.call('POST', `${path}/settle`, {
      key,
      body: { ...settleBodyOf(task), actual_amount: (task.billing.actual_amount ?? 0) * 2 },
    });
    expect(refused.statusCode).toBe(409);
    expect(refused.json<{ error: { message: string } }>().error.message).toContain(
      'never the quote',
    );
    await gateway.services.store.db
      .updateTable('tasks')
      .set({ quoted_amount: task.quote.quoted_amount })
      .where('id', '=', task.id)
      .execute();
    expect(
      (await gateway.call('POST', `${path}/settle`, { key, body: settleBodyOf(task) })).statusCode,
    ).toBe(200);
  });

  it('50 concurrent settles charge exactly once; a repeat with the same key replays, a new one is 409', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { accountId, key, path, task } = await pricedImageTask(client);
    const body = settleBodyOf(task);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => client.call('POST', `${path}/settle`, { key, body })),
    );
    const statuses = results.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status !== 200 && status !== 409)).toEqual([]);
    const amount = task.billing.actual_amount ?? 0;
    expect(await client.balance(accountId)).toEqual({
      balance: 100_000_000 - amount,
      held: 0,
      available: 100_000_000 - amount,
    });
    const idempotencyKey = randomUUID();
    const first = await client.call('POST', `${path}/settle`, { key, body, idempotencyKey });
    expect(first.statusCode).toBe(409);
    expect(first.json()).toMatchObject({ error: { code: 'SETTLEMENT_NOT_ALLOWED' } });
  });

  it('a settle retried with its idempotency key replays the settlement without charging again', async () => {
    gateway = await startTaskGateway(dialect);
    const { accountId, key, path, task } = await pricedImageTask(gateway);
    const idempotencyKey = randomUUID();
    const body = settleBodyOf(task);
    const first = await gateway.call('POST', `${path}/settle`, { key, body, idempotencyKey });
    const again = await gateway.call('POST', `${path}/settle`, { key, body, idempotencyKey });
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((await gateway.balance(accountId)).balance).toBe(
      100_000_000 - (task.billing.actual_amount ?? 0),
    );
  });

  it('a bill above the hold with too little money is 402, then after a top-up the same body settles; nothing regenerated', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const owner = await client.account(0);
    // Exactly the quote is available.
    const quote = (
      await client.call('POST', '/v1/images/quote', {
        key: owner.key,
        body: { model: 'sim-image', prompt: 'a lighthouse', size: '256x256' },
      })
    ).json<{ quoted_amount: number }>();
    await client.admin('POST', `/admin/v1/accounts/${owner.accountId}/topups`, {
      amount: quote.quoted_amount,
      reference: randomUUID(),
    });
    const created = await client.call('POST', '/v1/images/generations', {
      key: owner.key,
      body: { model: 'sim-image', prompt: 'a lighthouse', size: '256x256' },
    });
    const path = `/v1/images/${created.json<TaskBody>().id}`;
    const task = await finishedTask(client, owner.key, path);
    // Stand-in for an upstream bill above the hold (the quote caps image and video bills, so
    // only such a bill, e.g. one corrected by an operator, can exceed it): one micro-yuan more.
    const above = (task.billing.actual_amount ?? 0) + 1;
    await client.services.store.db
      .updateTable('tasks')
      .set({ actual_amount: above })
      .where('id', '=', task.id)
      .execute();
    const body = { ...settleBodyOf(task), actual_amount: above };
    const short = await client.call('POST', `${path}/settle`, { key: owner.key, body });
    expect(short.statusCode).toBe(402);
    expect(short.json()).toMatchObject({ error: { code: 'INSUFFICIENT_FUNDS' } });
    const still = (await client.call('GET', path, { key: owner.key })).json<TaskBody>();
    expect(still.billing).toMatchObject({ state: 'pending', settlement_pending: true });
    await client.admin('POST', `/admin/v1/accounts/${owner.accountId}/topups`, {
      amount: 1,
      reference: randomUUID(),
    });
    const settled = await client.call('POST', `${path}/settle`, { key: owner.key, body });
    expect(settled.statusCode).toBe(200);
    expect(settled.json<TaskBody>().outputs).toHaveLength(1);
    expect(await client.balance(owner.accountId)).toEqual({ balance: 0, held: 0, available: 0 });
    const submissions = await client.services.store.db
      .selectFrom('tasks')
      .select('attempts')
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow();
    // Settling leased nothing: the worker took it once (the synchronous image submission).
    expect(submissions.attempts).toBe(1);
  });
});
