import { afterEach, expect, it } from 'vitest';
import { ApiError } from '../../src/errors/api-error.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { manualClock, startGateway, type TestGateway } from '../helpers/gateway.js';
import { finishedRequest } from '../helpers/records.js';
import { succeeded, usageOf } from './spend.js';

const MINUTE = 60_000;

/**
 * `GET /v1/account/usage` (docs/usage.md): what the account was charged per UTC day and model,
 * from the journal's captures — so it matches the money that moved, counts a charge of 0, leaves
 * failures and top-ups out, and outlives the request records' retention.
 */
describeEachDialect('account usage on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  it('sums captures per UTC day and model, and equals the journal', async () => {
    const clock = manualClock(Date.parse('2026-11-10T23:58:00Z'));
    gateway = await startGateway(dialect, { clock });
    const client = gateway;
    const { accountId, key } = await client.account(1_000_000);
    const charge = (amount: number, model: string) =>
      finishedRequest(client.services, { key, hold: 20, outcome: succeeded(amount), model });

    await charge(3, 'sim-embed');
    await charge(4, 'sim-embed');
    await finishedRequest(client.services, {
      key,
      hold: 20,
      outcome: {
        kind: 'failed',
        error: new ApiError('UPSTREAM_ERROR', 'x'),
        upstreamRequestId: null,
      },
    });
    clock.advance(3 * MINUTE); // 2026-11-11T00:01Z: the next UTC day
    await charge(7, 'sim-chat');
    await charge(5, 'sim-embed');
    await charge(0, 'sim-embed'); // charged nothing, still a charged request
    await client.admin('POST', `/admin/v1/accounts/${accountId}/topups`, {
      amount: 50,
      reference: 'not usage',
    });
    clock.advance(2 * 86_400_000); // 2026-11-13
    await charge(9, 'sim-chat');

    const usage = await usageOf(client, key, 'from=2026-11-01&to=2026-11-30');
    expect(usage).toEqual({
      object: 'account.usage',
      account_id: accountId,
      currency: 'CNY_MICRO',
      from: '2026-11-01',
      to: '2026-11-30',
      data: [
        { date: '2026-11-10', model: 'sim-embed', requests: 2, amount: 7 },
        { date: '2026-11-11', model: 'sim-chat', requests: 1, amount: 7 },
        { date: '2026-11-11', model: 'sim-embed', requests: 2, amount: 5 },
        { date: '2026-11-13', model: 'sim-chat', requests: 1, amount: 9 },
      ],
      totals: {
        requests: 6,
        amount: 28,
        by_model: [
          { model: 'sim-chat', requests: 2, amount: 16 },
          { model: 'sim-embed', requests: 4, amount: 12 },
        ],
      },
    });
    const captured = await client.services.store.db
      .selectFrom('journal')
      .select(['balance_delta'])
      .where('account_id', '=', accountId)
      .where('kind', '=', 'capture')
      .execute();
    expect(usage.totals.amount).toBe(-captured.reduce((sum, row) => sum + row.balance_delta, 0));
    expect(usage.totals.requests).toBe(captured.length);
    expect((await client.balance(accountId)).balance).toBe(1_000_000 + 50 - usage.totals.amount);

    // One day, both ends included; the default is the 30 days up to today.
    const oneDay = await usageOf(client, key, 'from=2026-11-11&to=2026-11-11');
    expect(oneDay.data.map((row) => row.date)).toEqual(['2026-11-11', '2026-11-11']);
    expect(oneDay.totals).toMatchObject({ requests: 3, amount: 12 });
    const recent = await usageOf(client, key);
    expect(recent).toMatchObject({ from: '2026-10-15', to: '2026-11-13' });
    expect(recent.data).toEqual(usage.data);

    // Records are purged after their retention; the spend stays (it is read from the journal).
    const purged = await client.services.requests.records.purgeExpired(
      clock.now() + 365 * 86_400_000,
    );
    expect(purged).toBeGreaterThan(0);
    expect(await usageOf(client, key, 'from=2026-11-01&to=2026-11-30')).toEqual(usage);
  });

  it('is empty, not missing, for an account that spent nothing', async () => {
    gateway = await startGateway(dialect);
    const { accountId, key } = await gateway.account(100);
    const usage = await usageOf(gateway, key);
    expect(usage).toMatchObject({
      account_id: accountId,
      data: [],
      totals: { requests: 0, amount: 0, by_model: [] },
    });
  });

  it('refuses a bad range with 400 INVALID_INPUT naming the parameter', async () => {
    const clock = manualClock(Date.parse('2026-11-13T10:00:00Z'));
    gateway = await startGateway(dialect, { clock });
    const { key } = await gateway.account(100);
    expect((await usageOf(gateway, key, 'from=2025-11-13&to=2026-11-13')).from).toBe('2025-11-13');
    const cases: [string, string][] = [
      ['from=2025-11-12&to=2026-11-13', 'from'],
      ['from=2026-11-14&to=2026-11-13', 'from'],
      ['from=2026-13-01', 'from'],
      ['from=2026-02-29', 'from'],
      ['to=20261101', 'to'],
      ['to=2026-11-01T00:00:00Z', 'to'],
      ['from=1969-12-31', 'from'],
      ['days=7', 'querystring.days'],
      ['from=2026-11-01&from=2026-11-02', 'querystring.from'],
    ];
    for (const [query, param] of cases) {
      const response = await gateway.call('GET', `/v1/account/usage?${query}`, { key });
      expect(response.statusCode, query).toBe(400);
      expect(response.json(), query).toMatchObject({ error: { code: 'INVALID_INPUT', param } });
    }
    expect((await gateway.call('GET', '/v1/account/usage')).statusCode).toBe(401);
  });
});
