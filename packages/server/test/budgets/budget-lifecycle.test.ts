import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import {
  manualClock,
  oneMicroYuanEmbeddingsConfig,
  startGateway,
  ADMIN_TOKEN,
  type TestGateway,
} from '../helpers/gateway.js';

/** Each small embeddings request holds and costs exactly 1 micro-yuan. */
const config = oneMicroYuanEmbeddingsConfig();

describeEachDialect('budget windows and views on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  const embed = (client: TestGateway, key: string, input = 'hello') =>
    client.call('POST', '/v1/embeddings', { key, body: { model: 'sim-embed', input } });

  const raw = (client: TestGateway, method: 'PUT' | 'DELETE', url: string, body?: unknown) =>
    client.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });

  it('refuses past a daily key budget until local midnight, then admits again', async () => {
    // 23:59 on Monday 2026-11-23 in Shanghai (the default zone).
    const clock = manualClock(Date.parse('2026-11-23T15:59:00Z'));
    gateway = await startGateway(dialect, { config, clock });
    const { accountId, key, keyId } = await gateway.account(1_000);
    await gateway.admin('PUT', `/admin/v1/keys/${keyId}/budget`, { limit: 3, window: 'daily' });
    for (let index = 0; index < 3; index += 1)
      expect((await embed(gateway, key)).statusCode).toBe(200);
    const refused = await embed(gateway, key);
    expect(refused.statusCode).toBe(402);
    const message = refused.json<{ error: { code: string; message: string } }>().error;
    expect(message.code).toBe('INSUFFICIENT_FUNDS');
    expect(message.message).toContain('daily budget of 3 micro-yuan has 0 left');
    expect(message.message).toContain('resets at 2026-11-23T16:00:00.000Z');
    expect(await gateway.balance(accountId)).toEqual({ balance: 997, held: 0, available: 997 });

    clock.advance(60_000);
    expect((await embed(gateway, key)).statusCode).toBe(200);
    const [view] = (await gateway.admin('GET', `/admin/v1/accounts/${accountId}/keys`))[
      'data'
    ] as Record<string, unknown>[];
    expect(view?.['budget']).toEqual({
      limit: 3,
      window: 'daily',
      spent: 1,
      held: 0,
      remaining: 2,
      resets_at: '2026-11-24T16:00:00.000Z',
    });
  });

  it('shows the account budget on GET /v1/account, counting captures and not releases', async () => {
    const clock = manualClock(Date.parse('2026-11-25T02:00:00Z'));
    gateway = await startGateway(dialect, { config, clock });
    const { accountId, key } = await gateway.account(1_000);
    expect((await gateway.call('GET', '/v1/account', { key })).json()).toMatchObject({
      budget: null,
    });
    await gateway.admin('PUT', `/admin/v1/accounts/${accountId}/budget`, {
      limit: 5,
      window: 'weekly',
    });
    expect((await embed(gateway, key)).statusCode).toBe(200);
    // Refused by the upstream before any work: the hold is released and gives the budget back.
    expect((await embed(gateway, key, 'no [sim:fail=400]')).statusCode).toBeGreaterThanOrEqual(400);
    expect((await gateway.call('GET', '/v1/account', { key })).json()).toMatchObject({
      balance: 999,
      budget: {
        limit: 5,
        window: 'weekly',
        spent: 1,
        held: 0,
        remaining: 4,
        resets_at: '2026-11-29T16:00:00.000Z',
      },
    });
    // A change of limit keeps the window's spend; removing the budget lifts it.
    const raised = await gateway.admin('PUT', `/admin/v1/accounts/${accountId}/budget`, {
      limit: 1,
      window: 'weekly',
    });
    expect(raised['budget']).toMatchObject({ spent: 1, remaining: 0 });
    expect((await embed(gateway, key)).statusCode).toBe(402);
    const removed = await gateway.admin('DELETE', `/admin/v1/accounts/${accountId}/budget`);
    expect(removed['budget']).toBeNull();
    expect((await embed(gateway, key)).statusCode).toBe(200);
  });

  it('refuses a malformed budget with a 400 naming the field, and changes nothing', async () => {
    gateway = await startGateway(dialect, { config });
    const { accountId, keyId } = await gateway.account(0);
    const cases: [unknown, string][] = [
      [{ limit: -1, window: 'daily' }, 'limit'],
      [{ limit: 1.5, window: 'daily' }, 'limit'],
      [{ limit: '10', window: 'daily' }, 'limit'],
      [{ window: 'daily' }, 'limit'],
      [{ limit: 10, window: 'hourly' }, 'window'],
      [{ limit: 10 }, 'window'],
    ];
    for (const [body, field] of cases) {
      const response = await raw(gateway, 'PUT', `/admin/v1/keys/${keyId}/budget`, body);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: field } });
    }
    const extra = await raw(gateway, 'PUT', `/admin/v1/accounts/${accountId}/budget`, {
      limit: 10,
      window: 'daily',
      windows: 'daily',
    });
    expect(extra.statusCode).toBe(400);
    expect(extra.json()).toMatchObject({ error: { message: expect.stringContaining('windows') } });
    const missing = await raw(gateway, 'PUT', '/admin/v1/keys/key_missing/budget', {
      limit: 10,
      window: 'daily',
    });
    expect(missing.statusCode).toBe(404);
    expect(
      (await raw(gateway, 'DELETE', '/admin/v1/accounts/acct_missing/budget')).statusCode,
    ).toBe(404);
    const keys = await gateway.admin('GET', `/admin/v1/accounts/${accountId}/keys`);
    expect(keys['data']).toEqual([expect.objectContaining({ budget: null })]);
    expect((await gateway.admin('GET', `/admin/v1/accounts/${accountId}`))['budget']).toBeNull();
  });

  it("a key reads its own budget and its account's on GET /v1/account, never another key's", async () => {
    // Wednesday 2026-11-25 10:00 in Shanghai.
    const clock = manualClock(Date.parse('2026-11-25T02:00:00Z'));
    gateway = await startGateway(dialect, { config, clock });
    const { accountId, key, keyId } = await gateway.account(1_000);
    const other = await gateway.newKey(accountId);
    await gateway.admin('PUT', `/admin/v1/keys/${keyId}/budget`, { limit: 4, window: 'daily' });
    await gateway.admin('PUT', `/admin/v1/accounts/${accountId}/budget`, {
      limit: 10,
      window: 'monthly',
    });
    expect((await embed(gateway, key)).statusCode).toBe(200);
    expect((await gateway.call('GET', '/v1/account', { key })).json()).toMatchObject({
      budget: { limit: 10, window: 'monthly', spent: 1, remaining: 9 },
      key_budget: {
        limit: 4,
        window: 'daily',
        spent: 1,
        held: 0,
        remaining: 3,
        resets_at: '2026-11-25T16:00:00.000Z',
      },
    });
    // The other key of the account shares the account's budget and has none of its own.
    expect((await gateway.call('GET', '/v1/account', { key: other.key })).json()).toMatchObject({
      budget: { limit: 10, spent: 1, remaining: 9 },
      key_budget: null,
    });
  });
});
