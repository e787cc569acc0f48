import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { finishedTask, settleBodyOf, type TaskBody } from '../helpers/tasks.js';

/**
 * Tasks reserve their quote when they are created: that reservation is what a budget limits.
 * Risk: a task path that holds outside the budget check, or a settlement that never counts.
 */
describeEachDialect('budgets on task reservations on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  const body = { model: 'sim-image', prompt: 'a red fox', size: '256x256' };

  it('refuses a task whose quote passes the key budget, and counts a settled one as spent', async () => {
    gateway = await startGateway(dialect);
    const client = gateway;
    const { accountId, key, keyId } = await client.account(100_000_000);
    const quote = (await client.call('POST', '/v1/images/quote', { key, body })).json<{
      quoted_amount: number;
    }>().quoted_amount;
    await client.admin('PUT', `/admin/v1/keys/${keyId}/budget`, {
      limit: quote - 1,
      window: 'monthly',
    });
    const refused = await client.call('POST', '/v1/images/generations', { key, body });
    expect(refused.statusCode).toBe(402);
    expect(refused.json()).toMatchObject({
      error: { code: 'INSUFFICIENT_FUNDS', message: expect.stringContaining('monthly budget') },
    });
    expect(await client.services.store.db.selectFrom('tasks').select('id').execute()).toEqual([]);

    await client.admin('PUT', `/admin/v1/keys/${keyId}/budget`, {
      limit: quote,
      window: 'monthly',
    });
    const created = await client.call('POST', '/v1/images/generations', { key, body });
    expect(created.statusCode, created.body).toBe(202);
    const keyBudget = async () =>
      (
        (await client.admin('GET', `/admin/v1/accounts/${accountId}/keys`))['data'] as {
          budget: Record<string, number>;
        }[]
      )[0]?.budget;
    expect(await keyBudget()).toMatchObject({ held: quote, spent: 0, remaining: 0 });

    const path = `/v1/images/${created.json<TaskBody>().id}`;
    const done = await finishedTask(client, key, path);
    const settled = await client.call('POST', `${path}/settle`, { key, body: settleBodyOf(done) });
    expect(settled.statusCode, settled.body).toBe(200);
    const charged = done.billing.actual_amount ?? -1;
    expect(await keyBudget()).toMatchObject({
      held: 0,
      spent: charged,
      remaining: quote - charged,
    });
  });
});
