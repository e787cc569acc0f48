import type {
  DashboardFigures,
  OperatorDashboard,
  OperatorRequestLog,
  OperatorRequestLogRow,
  RedemptionBatch,
  RedemptionBatchList,
  RedemptionBatchVoided,
} from '@tollgate/protocol';
import { wireSchemas } from '@tollgate/protocol/wire-schemas';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ConfigFile } from '../../src/config/schema.js';
import type { AuditEventView } from '../../src/audit/audit-log.js';
import { consoleCall, consoleUser, type ConsoleSession } from '../helpers/console-session.js';
import { describeEachDialect, openTestStore } from '../helpers/dialects.js';
import { manualClock, startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { finishedRequest, unknownOutcome } from '../helpers/records.js';
import { migratorOf, sqlitePlanOf } from '../helpers/schema-checks.js';

/**
 * The operator's dashboard, global request log and redemption code batches (issue 36, item 6;
 * docs/console.md, "Dashboard", "Request log", "Redemption codes"). The risks: figures that are
 * not the money that moved (a second rule beside the journal's captures), a margin computed where
 * no channel cost is known, held money or the queue miscounted; a log filter that does not narrow
 * (or narrows wrongly), pages that repeat or skip records; a void that touches a redeemed code or
 * leaves a voided one redeemable, or audits twice; a member reading any of it; a bad query that
 * is not a 400 naming its field; and aggregation queries without an index.
 */

const DAY = 86_400_000;

const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema({ components: { schemas: wireSchemas } }, 'wire.json');

/** `value` is exactly the wire type `type` of packages/protocol (no field more, none missing). */
function expectWire(type: string, value: unknown): void {
  const validate = ajv.compile({ $ref: `wire.json#/components/schemas/${type}` });
  expect(validate(value), `${type}: ${JSON.stringify(validate.errors)}`).toBe(true);
}
const START = Date.parse('2026-11-10T10:00:00Z');

function modelOf(id: string) {
  const model = defaultConfig.models.find((each) => each.id === id);
  if (model === undefined) throw new Error(`no ${id}`);
  return model;
}

/** sim-chat on one channel with a cost of half its price (exact); sim-embed with no cost. */
const HALF = { input_per_million_tokens: 1_000_000, output_per_million_tokens: 4_000_000 };
function dashboardConfig(): ConfigFile {
  const { upstream: _single, ...chat } = modelOf('sim-chat');
  return testConfig({
    models: [
      {
        ...chat,
        channels: [{ id: 'chat-costed', upstream: 'simulator', model: 'sim-chat', cost: HALF }],
      },
      modelOf('sim-embed'),
    ],
  });
}

interface Charge {
  id: string;
  account: 'a' | 'b';
  keyId: string;
  model: 'sim-chat' | 'sim-embed';
  amount: number;
  cost: number | null;
  channel: string | null;
  day: string;
}

const ZERO: DashboardFigures = {
  requests: 0,
  revenue: 0,
  channel_cost: null,
  margin: null,
  revenue_without_cost: 0,
};

/** The figures the dashboard must show for `charges`, computed from each record on its own. */
function figuresOf(charges: readonly Charge[]): DashboardFigures {
  const costed = charges.filter((charge) => charge.cost !== null);
  const sum = (list: readonly Charge[], of: (charge: Charge) => number) =>
    list.reduce((total, charge) => total + of(charge), 0);
  return {
    requests: charges.length,
    revenue: sum(charges, (charge) => charge.amount),
    channel_cost: costed.length === 0 ? null : sum(costed, (charge) => charge.cost ?? 0),
    margin:
      costed.length === 0
        ? null
        : sum(costed, (charge) => charge.amount) - sum(costed, (charge) => charge.cost ?? 0),
    revenue_without_cost: sum(
      charges.filter((charge) => charge.cost === null),
      (charge) => charge.amount,
    ),
  };
}

describeEachDialect('the operator dashboard, request log and code batches on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  /**
   * Two accounts charged over three UTC days on two models (sim-chat on a channel with a cost,
   * sim-embed on one without), a failed request, and one `submission_unknown` record holding
   * 7,000 micro-yuan on account B.
   */
  async function world() {
    const clock = manualClock(START);
    const client = (gateway = await startGateway(dialect, { clock, config: dashboardConfig() }));
    const a = await client.account(100_000_000, { name: 'alpha main' });
    const a2 = await client.newKey(a.accountId, { name: 'alpha batch' });
    const b = await client.account(50_000_000, { name: 'beta' });
    const emails = {
      a: String((await client.admin('GET', `/admin/v1/accounts/${a.accountId}`))['email']),
      b: String((await client.admin('GET', `/admin/v1/accounts/${b.accountId}`))['email']),
    };
    const charges: Charge[] = [];
    const ids: string[] = [];
    const send = async (
      account: 'a' | 'b',
      key: { key: string; keyId: string },
      model: 'sim-chat' | 'sim-embed',
      text: string,
    ) => {
      clock.advance(1_000); // each record at its own time: the log's order is the sending order
      const response = await client.call(
        'POST',
        model === 'sim-chat' ? '/v1/chat/completions' : '/v1/embeddings',
        {
          key: key.key,
          body:
            model === 'sim-chat'
              ? { model, max_tokens: 40, messages: [{ role: 'user', content: text }] }
              : { model, input: text },
        },
      );
      const id = String(response.headers['x-service-request-id']);
      ids.push(id);
      if (response.statusCode !== 200) return id;
      const record = await client.admin('GET', `/admin/v1/requests/${id}`);
      charges.push({
        id,
        account,
        keyId: key.keyId,
        model,
        amount: (record['bill'] as { amount: number }).amount,
        cost: record['channel_cost'] as number | null,
        channel: record['channel'] as string | null,
        day: new Date(clock.now()).toISOString().slice(0, 10),
      });
      return id;
    };
    await send('a', a, 'sim-chat', 'the first words of the month');
    await send('a', a, 'sim-embed', 'an embedding of a few words');
    await send('b', b, 'sim-chat', 'another account, another chat, a little longer');
    clock.advance(DAY);
    await send('a', a2, 'sim-embed', 'the batch key embeds');
    const failed = await send('b', b, 'sim-embed', 'refused [sim:fail=500]');
    clock.advance(1_000);
    const unknownAt = clock.now();
    const unknown = await finishedRequest(client.services, {
      key: b.key,
      hold: 7_000,
      outcome: unknownOutcome,
    });
    ids.push(unknown);
    clock.advance(DAY);
    await send('a', a, 'sim-chat', 'the third day');
    await send('b', b, 'sim-embed', 'one');
    await send('b', b, 'sim-embed', 'two more words');
    const operator = await consoleUser(client, 'ops@example.test', 'operator');
    return { client, clock, a, a2, b, emails, charges, ids, failed, unknown, unknownAt, operator };
  }

  const getJson = async <T>(client: TestGateway, session: ConsoleSession, url: string) => {
    const response = await consoleCall(client, session, 'GET', url);
    expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
    return response.json<T>();
  };

  it('shows revenue, channel cost and margin per day, account, model and channel exactly as the money moved; held money and the queue', async () => {
    const { client, a, b, emails, charges, unknownAt, operator } = await world();
    expect(charges.filter((charge) => charge.model === 'sim-chat')).toHaveLength(3);
    // The chat's channel has a cost of half the price: every chat record carries it.
    for (const charge of charges)
      expect(charge.cost).toBe(charge.model === 'sim-chat' ? charge.amount / 2 : null);

    const dashboard = await getJson<OperatorDashboard>(
      client,
      operator,
      '/console/api/admin/dashboard?from=2026-11-01&to=2026-11-30',
    );
    expectWire('OperatorDashboard', dashboard);
    const byAccount = (account: 'a' | 'b') =>
      charges.filter((charge) => charge.account === account);
    // Each account's revenue is what left its balance (the unknown record holds, charges nothing).
    expect(figuresOf(byAccount('a')).revenue).toBe(
      100_000_000 - (await client.balance(a.accountId)).balance,
    );
    expect(figuresOf(byAccount('b')).revenue).toBe(
      50_000_000 - (await client.balance(b.accountId)).balance,
    );
    const days = [...new Set(charges.map((charge) => charge.day))].sort();
    const models = ['sim-chat', 'sim-embed'] as const;
    const chatRevenue = figuresOf(charges.filter((charge) => charge.model === 'sim-chat')).revenue;
    const embedRevenue = figuresOf(
      charges.filter((charge) => charge.model === 'sim-embed'),
    ).revenue;
    const [first, second] =
      figuresOf(byAccount('a')).revenue >= figuresOf(byAccount('b')).revenue
        ? (['a', 'b'] as const)
        : (['b', 'a'] as const);
    const accountIds = { a: a.accountId, b: b.accountId };
    expect(dashboard).toEqual({
      object: 'operator.dashboard',
      currency: 'CNY_MICRO',
      from: '2026-11-01',
      to: '2026-11-30',
      totals: figuresOf(charges),
      days: days.map((date) => ({
        date,
        ...figuresOf(charges.filter((charge) => charge.day === date)),
      })),
      by_day_model: days.flatMap((date) =>
        models
          .map((model) => charges.filter((each) => each.day === date && each.model === model))
          .filter((list) => list.length > 0)
          .map((list) => ({
            date,
            model: list[0]?.model,
            requests: list.length,
            amount: figuresOf(list).revenue,
          })),
      ),
      top_accounts: [first, second].map((account) => ({
        account_id: accountIds[account],
        email: emails[account],
        ...figuresOf(byAccount(account)),
      })),
      accounts_charged: 2,
      models: (chatRevenue >= embedRevenue ? models : [...models].reverse()).map((model) => ({
        model,
        ...figuresOf(charges.filter((charge) => charge.model === model)),
      })),
      channels: (chatRevenue >= embedRevenue
        ? (['chat-costed', 'sim-embed~0'] as const)
        : (['sim-embed~0', 'chat-costed'] as const)
      ).map((channel) => ({
        channel,
        cost_configured: channel === 'chat-costed',
        ...figuresOf(charges.filter((charge) => charge.channel === channel)),
      })),
      open_holds: { amount: 7_000, accounts: 1 },
      unresolved: {
        count: 1,
        held: 7_000,
        oldest_created_at: new Date(unknownAt).toISOString(),
      },
    });
    // The margin is where a cost is known: the chats', never the embeddings'.
    expect(dashboard.totals.margin).toBe(chatRevenue / 2);
    expect(dashboard.totals.revenue_without_cost).toBe(embedRevenue);
    expect(dashboard.models.find((row) => row.model === 'sim-embed')).toMatchObject({
      channel_cost: null,
      margin: null,
    });

    // The default period is the 30 days ending today (the gateway's clock: 2026-11-12).
    const byDefault = await getJson<OperatorDashboard>(
      client,
      operator,
      '/console/api/admin/dashboard',
    );
    expect(byDefault).toMatchObject({ from: '2026-10-14', to: '2026-11-12' });
    expect(byDefault.totals).toEqual(dashboard.totals);
    // One day: only that day's captures; a period with none: zeros, no cost, no margin.
    const oneDay = await getJson<OperatorDashboard>(
      client,
      operator,
      `/console/api/admin/dashboard?from=${days[1]}&to=${days[1]}`,
    );
    expect(oneDay.totals).toEqual(figuresOf(charges.filter((charge) => charge.day === days[1])));
    expect(oneDay.accounts_charged).toBe(1);
    const empty = await getJson<OperatorDashboard>(
      client,
      operator,
      '/console/api/admin/dashboard?from=2025-01-01&to=2025-01-31',
    );
    expect(empty).toMatchObject({
      totals: ZERO,
      days: [],
      top_accounts: [],
      accounts_charged: 0,
      channels: [],
      open_holds: { amount: 7_000, accounts: 1 },
    });
  });

  it('lists every account’s records newest first; each filter narrows to exactly its records; pages neither repeat nor skip', async () => {
    const { client, clock, a, a2, b, emails, charges, ids, failed, unknown, operator } =
      await world();
    const period = 'from=2026-11-01&to=2026-12-01';
    const log = (query: string) =>
      getJson<OperatorRequestLog>(
        client,
        operator,
        `/console/api/admin/requests?${period}&${query}`,
      );
    const first = await log('limit=100');
    expectWire('OperatorRequestLog', first);
    const all = first.data;
    expect(all.map((row) => row.id)).toEqual([...ids].reverse());
    // Each row names its account by email and its key by name, with the bill.
    const byId = new Map(all.map((row) => [row.id, row]));
    for (const charge of charges)
      expect(byId.get(charge.id)).toMatchObject({
        account_id: charge.account === 'a' ? a.accountId : b.accountId,
        account_email: emails[charge.account],
        key_id: charge.keyId,
        key_name:
          charge.keyId === a2.keyId
            ? 'alpha batch'
            : charge.account === 'a'
              ? 'alpha main'
              : 'beta',
        model: charge.model,
        status: 'succeeded',
        amount: charge.amount,
        captured: true,
      });
    expect(byId.get(failed)).toMatchObject({ status: 'failed', amount: null, captured: false });
    expect(byId.get(unknown)).toMatchObject({
      status: 'submission_unknown',
      account_email: emails.b,
    });

    const narrows = async (query: string, keep: (row: OperatorRequestLogRow) => boolean) => {
      const rows = (await log(`limit=100&${query}`)).data;
      const expected = all.filter(keep).map((row) => row.id);
      expect(expected.length, query).toBeGreaterThan(0);
      expect(expected.length, query).toBeLessThan(all.length);
      expect(
        rows.map((row) => row.id),
        query,
      ).toEqual(expected);
    };
    await narrows(`account_id=${a.accountId}`, (row) => row.account_id === a.accountId);
    await narrows(`key_id=${a2.keyId}`, (row) => row.key_id === a2.keyId);
    await narrows(`account_id=${b.accountId}&key_id=${b.keyId}`, (row) => row.key_id === b.keyId);
    await narrows('model=sim-embed', (row) => row.model === 'sim-embed');
    await narrows('status=failed', (row) => row.status === 'failed');
    await narrows('status=submission_unknown', (row) => row.status === 'submission_unknown');
    await narrows(
      `account_id=${b.accountId}&model=sim-embed&status=succeeded`,
      (row) =>
        row.account_id === b.accountId && row.model === 'sim-embed' && row.status === 'succeeded',
    );
    // Time: the second day only (from included, to excluded), as times with their zone.
    const day2 = (row: OperatorRequestLogRow) => row.created_at.startsWith('2026-11-11');
    const rows = (
      await getJson<OperatorRequestLog>(
        client,
        operator,
        '/console/api/admin/requests?from=2026-11-11T00:00:00Z&to=2026-11-12T08:00:00%2B08:00&limit=100',
      )
    ).data;
    expect(rows.map((row) => row.id)).toEqual(all.filter(day2).map((row) => row.id));
    // A key of one account with another account's filter: nothing (both hold).
    expect((await log(`account_id=${a.accountId}&key_id=${b.keyId}`)).data).toEqual([]);

    // Pages of 2: every record once, in order, then no cursor.
    const paged: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: OperatorRequestLog = await log(
        `limit=2${cursor === null ? '' : `&cursor=${cursor}`}`,
      );
      expect(page.data.length).toBeLessThanOrEqual(2);
      paged.push(...page.data.map((row) => row.id));
      cursor = page.next_cursor;
      expect(cursor === null).toBe(!page.has_more);
      pages += 1;
    } while (cursor !== null && pages < 20);
    expect(paged).toEqual(all.map((row) => row.id));
    expect(new Set(paged).size).toBe(paged.length);
    // A filtered list pages the same way.
    const embeds: string[] = [];
    let next: string | null = null;
    do {
      const page: OperatorRequestLog = await log(
        `model=sim-embed&limit=1${next === null ? '' : `&cursor=${next}`}`,
      );
      embeds.push(...page.data.map((row) => row.id));
      next = page.next_cursor;
    } while (next !== null);
    expect(embeds).toEqual(all.filter((row) => row.model === 'sim-embed').map((row) => row.id));

    // Without a period: the 30 days before now.
    const recent = await getJson<OperatorRequestLog>(
      client,
      operator,
      '/console/api/admin/requests',
    );
    expect(recent.from).toBe(new Date(clock.now() + 1 - 30 * DAY).toISOString());
    expect(recent.data.map((row) => row.id)).toEqual(all.map((row) => row.id));
  });

  it('lists code batches with what was redeemed; a void leaves redeemed codes redeemed and refuses the rest, once, audited', async () => {
    gateway = await startGateway(dialect);
    const client = gateway;
    const { accountId } = await client.account(0);
    const operator = await consoleUser(client, 'ops@example.test', 'operator');
    const created = await consoleCall(
      client,
      operator,
      'POST',
      '/console/api/admin/redemption-codes/batches',
      {
        body: { amount: 2_500_000, count: 3 },
      },
    );
    expect(created.statusCode, created.body).toBe(201);
    const codes = created.json<{ data: { id: string; code: string }[] }>().data;
    const single = await consoleCall(
      client,
      operator,
      'POST',
      '/console/api/admin/redemption-codes',
      {
        body: { amount: 1_000_000 },
      },
    );
    expect(single.statusCode).toBe(201);
    const redeem = (code: string) =>
      client.app.inject({
        method: 'POST',
        url: `/admin/v1/accounts/${accountId}/redemptions`,
        headers: { authorization: 'Bearer test-admin-token-0123456789' },
        payload: { code },
      });
    expect((await redeem(codes[0]?.code ?? '')).statusCode).toBe(200);

    const listed = await getJson<RedemptionBatchList>(
      client,
      operator,
      '/console/api/admin/code-batches',
    );
    expectWire('RedemptionBatchList', listed);
    expect(listed.data).toHaveLength(2);
    const [ofOne, batch] = listed.data as [RedemptionBatch, RedemptionBatch];
    expect(ofOne).toMatchObject({ amount: 1_000_000, codes: 1, redeemed: 0, unredeemed: 1 });
    expect(batch).toMatchObject({
      object: 'redemption_batch',
      amount: 2_500_000,
      expires_at: null,
      codes: 3,
      redeemed: 1,
      redeemed_amount: 2_500_000,
      voided: 0,
      unredeemed: 2,
      voided_at: null,
    });
    // Paged newest first by `after`.
    const firstPage = await getJson<RedemptionBatchList>(
      client,
      operator,
      '/console/api/admin/code-batches?limit=1',
    );
    expect(firstPage).toMatchObject({ has_more: true, next_cursor: ofOne.id });
    const secondPage = await getJson<RedemptionBatchList>(
      client,
      operator,
      `/console/api/admin/code-batches?limit=1&after=${ofOne.id}`,
    );
    expect(secondPage).toMatchObject({ has_more: false, data: [{ id: batch.id }] });

    const voidUrl = `/console/api/admin/code-batches/${batch.id}/void`;
    const voided = await consoleCall(client, operator, 'POST', voidUrl);
    expect(voided.statusCode, voided.body).toBe(200);
    expectWire('RedemptionBatchVoided', voided.json());
    expect(voided.json<RedemptionBatchVoided>()).toMatchObject({
      voided_now: 2,
      batch: { codes: 3, redeemed: 1, voided: 2, unredeemed: 0 },
    });
    // The voided codes are refused as a used one is; the balance has the redeemed one only.
    for (const code of codes.slice(1)) {
      const refused = await redeem(code.code);
      expect(refused.statusCode).toBe(404);
      expect(refused.json()).toMatchObject({ error: { code: 'NOT_FOUND', param: 'code' } });
    }
    expect(await client.balance(accountId)).toMatchObject({ balance: 2_500_000 });
    const rows = await client.services.store.db
      .selectFrom('redemption_codes')
      .select(['id', 'redeemed_by', 'redeemed_at', 'voided_at'])
      .where('batch_id', '=', batch.id)
      .execute();
    const redeemed = rows.find((row) => row.id === codes[0]?.id);
    expect(redeemed).toMatchObject({ redeemed_by: accountId, voided_at: null });
    expect(rows.filter((row) => row.voided_at !== null)).toHaveLength(2);
    // The single code of the other batch is untouched and still redeemable.
    expect((await redeem(single.json<{ code: string }>().code)).statusCode).toBe(200);

    // Again: nothing more to void, the same batch, one audit row in all.
    const again = await consoleCall(client, operator, 'POST', voidUrl);
    expect(again.statusCode).toBe(200);
    expect(again.json<RedemptionBatchVoided>()).toMatchObject({
      voided_now: 0,
      batch: { redeemed: 1, voided: 2, unredeemed: 0 },
    });
    const audit = (await client.admin(
      'GET',
      '/admin/v1/audit?action=redemption_code.void_batch',
    )) as {
      data: AuditEventView[];
    };
    expect(audit.data).toHaveLength(1);
    expect(audit.data[0]).toMatchObject({
      target_id: batch.id,
      amount: 5_000_000,
      detail: { voided: 2 },
      actor: { kind: 'console_user', email: 'ops@example.test' },
    });
    // The batch's creation names it in its audit row.
    const creations = (await client.admin(
      'GET',
      '/admin/v1/audit?action=redemption_code.create_batch',
    )) as { data: AuditEventView[] };
    expect(creations.data[0]?.detail).toMatchObject({ batch_id: batch.id, count: 3 });

    const missing = await consoleCall(
      client,
      operator,
      'POST',
      '/console/api/admin/code-batches/rdb_missing/void',
    );
    expect(missing.statusCode).toBe(404);
    const withBody = await consoleCall(client, operator, 'POST', voidUrl, { body: { all: true } });
    expect(withBody.statusCode).toBe(400);
  });

  it('refuses a member (403) on every route, whatever the query; a bad query is a 400 naming its field', async () => {
    gateway = await startGateway(dialect);
    const client = gateway;
    const { accountId } = await client.account(1_000);
    const member = await consoleUser(client, 'member@example.test', 'member', accountId);
    const operator = await consoleUser(client, 'ops@example.test', 'operator');
    const calls: ['GET' | 'POST', string][] = [
      ['GET', '/console/api/admin/dashboard'],
      ['GET', '/console/api/admin/dashboard?from=yesterday'],
      ['GET', '/console/api/admin/requests'],
      ['GET', `/console/api/admin/requests?account_id=${accountId}&status=nope`],
      ['GET', '/console/api/admin/code-batches'],
      ['POST', '/console/api/admin/code-batches/rdb_missing/void'],
    ];
    for (const [method, url] of calls) {
      const response = await consoleCall(client, member, method, url);
      expect(response.statusCode, `${method} ${url}`).toBe(403);
      expect(response.json()).toMatchObject({ error: { code: 'PERMISSION_DENIED' } });
    }

    const bad: [url: string, param: string][] = [
      ['/console/api/admin/dashboard?from=yesterday', 'from'],
      ['/console/api/admin/dashboard?to=2026-02-30', 'to'],
      ['/console/api/admin/dashboard?from=2024-01-01&to=2025-12-31', 'from'],
      ['/console/api/admin/dashboard?from=2026-03-02&to=2026-03-01', 'from'],
      ['/console/api/admin/dashboard?period=week', 'querystring.period'],
      ['/console/api/admin/requests?status=nope', 'status'],
      ['/console/api/admin/requests?from=last-week', 'from'],
      ['/console/api/admin/requests?to=2026-11-01T08:00', 'to'],
      ['/console/api/admin/requests?from=2026-11-02&to=2026-11-01', 'to'],
      ['/console/api/admin/requests?from=2025-01-01&to=2026-11-01', 'from'],
      ['/console/api/admin/requests?cursor=not-a-cursor', 'cursor'],
      ['/console/api/admin/requests?limit=0', 'limit'],
      ['/console/api/admin/requests?account_id=', 'querystring.account_id'],
      ['/console/api/admin/requests?email=a@example.test', 'querystring.email'],
      ['/console/api/admin/code-batches?limit=1000', 'limit'],
      ['/console/api/admin/code-batches?after=rdb_missing', 'after'],
    ];
    for (const [url, param] of bad) {
      const response = await consoleCall(client, operator, 'GET', url);
      expect(response.statusCode, url).toBe(400);
      expect(response.json(), url).toMatchObject({ error: { code: 'INVALID_INPUT', param } });
    }
  });

  it('groups codes made before batches existed by their creation call, and reads through indexes (SQLite plans)', async () => {
    const opened = await openTestStore(dialect);
    try {
      const { store } = opened;
      const migrations = await migratorOf(store);
      expect((await migrations.migrateTo('038-response-turns')).error).toBeUndefined();
      const db = store.db.withoutPlugins();
      const code = (id: string, createdAt: number, amount: number, expiresAt: number | null) =>
        sql`insert into redemption_codes (id, code_hash, amount, created_at, expires_at, redeemed_by, redeemed_at)
            values (${id}, ${`hash-${id}`}, ${amount}, ${createdAt}, ${expiresAt}, null, null)`.execute(
          db,
        );
      // One call of three codes, one of two with an expiry, and a single code at the same time
      // as the first call but of another value: three batches.
      for (const id of ['rdm_1', 'rdm_2', 'rdm_3']) await code(id, 1_000, 5_000, null);
      for (const id of ['rdm_4', 'rdm_5']) await code(id, 2_000, 5_000, 9_000_000);
      await code('rdm_6', 1_000, 7_000, null);
      expect((await migrations.migrateToLatest()).error).toBeUndefined();
      const batches = await store.db
        .selectFrom('redemption_batches')
        .selectAll()
        .orderBy('created_at')
        .orderBy('amount')
        .execute();
      expect(
        batches.map((row) => [
          Number(row.created_at),
          Number(row.amount),
          row.count,
          row.expires_at === null ? null : Number(row.expires_at),
        ]),
      ).toEqual([
        [1_000, 5_000, 3, null],
        [1_000, 7_000, 1, null],
        [2_000, 5_000, 2, 9_000_000],
      ]);
      const members = await store.db
        .selectFrom('redemption_codes')
        .select(['id', 'batch_id'])
        .orderBy('id')
        .execute();
      const batchOf = new Map(members.map((row) => [row.id, row.batch_id]));
      expect(batchOf.get('rdm_1')).toBe(batches[0]?.id);
      expect(batchOf.get('rdm_3')).toBe(batches[0]?.id);
      expect(batchOf.get('rdm_6')).toBe(batches[1]?.id);
      expect(batchOf.get('rdm_5')).toBe(batches[2]?.id);

      if (store.dialect !== 'sqlite') return;
      const plan = (query: { compile(): { sql: string } }) => sqlitePlanOf(store.db, query);
      // The dashboard's captures of a period across accounts: the partial index of captures.
      const captures = store.db
        .selectFrom('journal')
        .select('account_id')
        .where('journal.kind', '=', sql.lit('capture'))
        .where('journal.created_at', '>=', sql.lit(1))
        .where('journal.created_at', '<', sql.lit(5));
      expect(await plan(captures)).toMatch(/USING INDEX journal_captures_created/);
      // The global log, newest first, without an owner: no scan, no sort.
      const log = store.db
        .selectFrom('requests')
        .select('id')
        .where('requests.created_at', '>=', sql.lit(1))
        .where('requests.created_at', '<', sql.lit(5))
        .orderBy('requests.created_at', 'desc')
        .orderBy('requests.id', 'desc')
        .limit(sql.lit(21));
      const logPlan = await plan(log);
      expect(logPlan).toMatch(/USING (COVERING )?INDEX requests_created/);
      expect(logPlan).not.toMatch(/TEMP B-TREE/);
      const counts = store.db
        .selectFrom('redemption_codes')
        .select('batch_id')
        .where('batch_id', 'in', [sql.lit('rdb_1')])
        .groupBy('batch_id');
      expect(await plan(counts)).toMatch(/USING (COVERING )?INDEX redemption_codes_batch/);
    } finally {
      await opened.close();
    }
  });
});
