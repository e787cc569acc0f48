import type { AccountStatement } from '@tollgate/protocol';
import { afterEach, expect, it } from 'vitest';
import { parseStatementPeriod, Statements } from '../../src/usage/statement.js';
import { CSV_HEADER, renderStatement } from '../../src/usage/statement-output.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, manualClock, startGateway, type TestGateway } from '../helpers/gateway.js';
import { finishedRequest } from '../helpers/records.js';
import {
  expectStatementReconciles,
  parseCsv,
  statementOf,
  statementText,
  succeeded,
} from './spend.js';

const OCTOBER_31 = Date.parse('2026-10-31T12:00:00Z');

/**
 * Account statements over periods (docs/usage.md, "Statements"): a period's closing balance is
 * the next one's opening, the running balance never dips below zero within a millisecond, the
 * CSV carries the same numbers as the JSON, and the statement is the same however many journal
 * pages it is read in.
 */
describeEachDialect('account statements over periods on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  /** October: top-up 1000, a charge of 100. November: a top-up whose reference needs quoting, charges. */
  async function twoMonths() {
    const clock = manualClock(OCTOBER_31);
    gateway = await startGateway(dialect, { clock });
    const client = gateway;
    const { accountId, key } = await client.account(1_000);
    const topUp = (amount: number, reference: string) =>
      client.admin('POST', `/admin/v1/accounts/${accountId}/topups`, { amount, reference });
    const charge = (amount: number, hold = 10) =>
      finishedRequest(client.services, { key, hold, outcome: succeeded(amount) });
    const october = await charge(100, 100);
    clock.advance(12 * 3_600_000); // 2026-11-01T00:00:00.000Z, the first instant of November
    await topUp(10, '=SUM(A1:A9), "quoted"');
    // Eight top-ups each paying for a charge above its hold, in one millisecond: in id order
    // alone a charge could come before the credit that paid for it.
    const november: string[] = [];
    for (let round = 0; round < 8; round += 1) {
      await topUp(40, `round ${round}`);
      november.push(await charge(40));
    }
    clock.advance(3 * 86_400_000 + 5_000); // 2026-11-04
    november.push(await charge(25));
    return { clock, client, accountId, october, november };
  }

  it('chains periods: each closing balance is the next opening, the last is the balance', async () => {
    const { client, accountId, october, november } = await twoMonths();
    const octoberStatement = await statementOf(client, accountId, 'from=2026-10-01&to=2026-10-31');
    expect(octoberStatement).toMatchObject({
      object: 'account.statement',
      account_id: accountId,
      currency: 'CNY_MICRO',
      from: '2026-10-01',
      to: '2026-10-31',
      period_start: '2026-10-01T00:00:00.000Z',
      period_end: '2026-11-01T00:00:00.000Z',
      complete: true,
      opening_balance: 0,
      closing_balance: 900,
      totals: { movements: 2, credits: 1_000, debits: 100 },
    });
    expect(octoberStatement.movements.map((movement) => [movement.kind, movement.amount])).toEqual([
      ['topup', 1_000],
      ['capture', -100],
    ]);
    expect(octoberStatement.movements[1]).toMatchObject({
      request_id: october,
      task_id: null,
      model: 'sim-embed',
      price_version: 'sim-embed@1',
      description: `usage of ${october}`,
      reference: null,
    });
    expectStatementReconciles(octoberStatement);

    const novemberStatement = await statementOf(client, accountId, 'from=2026-11-01&to=2026-11-30');
    expect(novemberStatement).toMatchObject({ complete: false, opening_balance: 900 });
    expectStatementReconciles(novemberStatement);
    expect(novemberStatement.movements.every((movement) => movement.balance >= 0)).toBe(true);
    expect(
      novemberStatement.movements
        .filter((movement) => movement.kind === 'capture')
        .map((movement) => movement.request_id)
        .sort(),
    ).toEqual([...november].sort());
    expect(novemberStatement.closing_balance).toBe((await client.balance(accountId)).balance);

    // No parameter: this month so far; `to` alone: that month up to that day.
    expect(await statementOf(client, accountId, '')).toMatchObject({
      from: '2026-11-01',
      to: '2026-11-04',
      opening_balance: 900,
      closing_balance: novemberStatement.closing_balance,
    });
    const toOnly = await statementOf(client, accountId, 'to=2026-11-01');
    expect(toOnly).toMatchObject({ from: '2026-11-01', opening_balance: 900 });
    expect(toOnly.movements).toHaveLength(17);
    const span = await statementOf(client, accountId, 'from=2026-10-31&to=2026-11-04');
    expect(span.movements).toEqual([...octoberStatement.movements, ...novemberStatement.movements]);
  });

  it('writes the same numbers as CSV (RFC 4180, header row, quoted and inert text)', async () => {
    const { client, accountId } = await twoMonths();
    const query = 'from=2026-10-31&to=2026-11-30';
    const json = await statementOf(client, accountId, query);
    const csv = await statementText(client, accountId, `${query}&format=csv`);
    expect(csv.contentType).toMatch(/^text\/csv; charset=utf-8/);
    expect(csv.disposition).toBe(
      `attachment; filename="statement-${accountId}-2026-10-31-2026-11-30.csv"`,
    );
    expect((await statementText(client, accountId, query, { accept: 'text/csv' })).body).toBe(
      csv.body,
    );
    // `format` wins over Accept.
    const asked = await statementText(client, accountId, `${query}&format=json`, {
      accept: 'text/csv',
    });
    expect(JSON.parse(asked.body)).toEqual(json);

    const [header, opening, ...rest] = parseCsv(csv.body);
    const closing = rest.pop();
    expect(header).toEqual([...CSV_HEADER]);
    expect(opening).toEqual([
      json.period_start,
      'opening',
      '',
      String(json.opening_balance),
      'opening balance',
      '',
      '',
      '',
      '',
      '',
      '',
    ]);
    expect(closing).toEqual([
      json.period_end,
      'closing',
      '',
      String(json.closing_balance),
      'closing balance',
      '',
      '',
      '',
      '',
      '',
      '',
    ]);
    expect(rest).toHaveLength(json.movements.length);
    rest.forEach((row, index) => {
      const movement = json.movements[index];
      const cell = (column: (typeof CSV_HEADER)[number]) => row[CSV_HEADER.indexOf(column)];
      expect(Number(cell('amount'))).toBe(movement?.amount);
      expect(Number(cell('balance'))).toBe(movement?.balance);
      expect(cell('journal_id')).toBe(movement?.id);
      expect(cell('time')).toBe(movement?.time);
      expect(cell('kind')).toBe(movement?.kind);
      expect(cell('request_id')).toBe(movement?.request_id ?? '');
    });
    const total = rest.reduce((sum, row) => sum + Number(row[2]), Number(opening?.[3]));
    expect(total).toBe(Number(closing?.[3]));
    // A reference a spreadsheet would run as a formula is written inert, and quoted.
    const quoted = rest.find((row) => row[5]?.includes('SUM'));
    expect(quoted?.[5]).toBe(`'=SUM(A1:A9), "quoted"`);
    expect(csv.body).toContain(`"'=SUM(A1:A9), ""quoted"""`);
  });

  it('is the same statement whatever the journal page size', async () => {
    const { client, accountId } = await twoMonths();
    const period = parseStatementPeriod(
      { from: '2026-10-01', to: '2026-11-30' },
      client.services.clock.now(),
    );
    const read = async (pageSize: number) => {
      const statements = new Statements(client.services.store.db, client.services.clock, pageSize);
      let text = '';
      for await (const chunk of renderStatement(
        await statements.prepare(accountId, period),
        'json',
      ))
        text += chunk;
      return JSON.parse(text) as AccountStatement;
    };
    const whole = await read(1_000);
    expect(whole.movements).toHaveLength(20);
    for (const pageSize of [1, 2, 3, 7])
      expect(await read(pageSize), `pages of ${pageSize}`).toEqual(whole);
    expect(await statementOf(client, accountId, 'from=2026-10-01&to=2026-11-30')).toEqual(whole);
  });

  it('refuses an unknown account (404) and a bad period or format (400 naming it)', async () => {
    const { client } = await twoMonths();
    const get = (url: string) =>
      client.app.inject({
        method: 'GET',
        url,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
    const missing = await get('/admin/v1/accounts/acct_nobody/statement');
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
    const { accountId } = await client.account(0);
    const cases: [string, string][] = [
      ['from=2026-11-31', 'from'],
      ['to=2026/11/30', 'to'],
      ['from=2026-12-01&to=2026-11-30', 'from'],
      ['format=xml', 'querystring.format'],
      ['month=2026-11', 'querystring.month'],
    ];
    for (const [query, param] of cases) {
      const response = await get(`/admin/v1/accounts/${accountId}/statement?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.json(), query).toMatchObject({ error: { code: 'INVALID_INPUT', param } });
    }
    const empty = await statementOf(client, accountId, '');
    expect(empty).toMatchObject({ opening_balance: 0, closing_balance: 0, movements: [] });
  });
});
