import { randomUUID } from 'node:crypto';
import type {
  AccountStatement,
  Wallet,
  WalletMovement,
  WalletMovementList,
} from '@tollgate/protocol';
import { afterEach, expect, it } from 'vitest';
import { CSV_HEADER, WALLET_CSV_COLUMNS } from '../../src/usage/statement-output.js';
import { consoleUser } from '../helpers/console-session.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { shortTimeoutsConfig, type TestGateway } from '../helpers/gateway.js';
import {
  finishedTask,
  startTaskGateway,
  type TaskBody,
  type TaskGateway,
} from '../helpers/tasks.js';
import {
  deliver,
  fakeStripeNetwork,
  openOrder,
  refundEvent,
  sessionEvent,
} from '../payments/stripe-harness.js';
import { parseCsv } from '../usage/spend.js';
import { consoleCall, signedInMember, type Signed } from './console-member.js';

const YUAN = 1_000_000;
const DAY_MS = 86_400_000;
const day = (time: number) => new Date(time).toISOString().slice(0, 10);
const INTEGER = /^-?[0-9]+$/;

type Member = Awaited<ReturnType<typeof signedInMember>>;

async function wallet(gateway: TestGateway, signed: Signed): Promise<Wallet> {
  const answer = await consoleCall(gateway, 'GET', '/console/api/wallet', { signed });
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json<Wallet>();
}

/** Every page of a period's movements, `limit` at a time, following `next_cursor`. */
async function movementPages(
  gateway: TestGateway,
  signed: Signed,
  period: string,
  limit: number,
): Promise<WalletMovementList[]> {
  const pages: WalletMovementList[] = [];
  let cursor: string | null = null;
  do {
    const answer = await consoleCall(
      gateway,
      'GET',
      `/console/api/wallet/movements?${period}&limit=${limit}${cursor === null ? '' : `&cursor=${cursor}`}`,
      { signed },
    );
    expect(answer.statusCode, answer.body).toBe(200);
    const page = answer.json<WalletMovementList>();
    pages.push(page);
    cursor = page.next_cursor;
    expect(page.has_more).toBe(cursor !== null);
  } while (cursor !== null);
  return pages;
}

/** Each movement's balance and held amount are the sums up to it, from the period's opening. */
function expectRunning(page: WalletMovementList, movements: readonly WalletMovement[]): void {
  let balance = page.opening_balance;
  let held = page.opening_held;
  for (const movement of movements) {
    balance += movement.amount;
    held += movement.held_change;
    expect(movement, movement.id).toMatchObject({ balance, held });
  }
}

/**
 * The member's wallet (issue 36, item 2; docs/console.md, "Wallet"): the balance, what is held
 * and by what, every journal entry with its running balance (exact, whichever page), the period
 * as CSV in micro-yuan, never another account's, and its queries refused by name.
 */
describeEachDialect('the member’s wallet on $name', (dialect) => {
  let gateway: TaskGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function start(): Promise<TaskGateway> {
    gateway = await startTaskGateway(dialect, {
      config: shortTimeoutsConfig(),
      services: { stripe: fakeStripeNetwork().settings },
    });
    return gateway;
  }

  it('balance, holds explained, every kind of movement with an exact running balance, the CSV of a period', async () => {
    const client = await start();
    // Day one starts an hour after the next UTC midnight: nothing below crosses a day by chance.
    const dayOne = Math.floor(client.clock.now() / DAY_MS) * DAY_MS + DAY_MS;
    client.clock.advanceTo(dayOne + 3_600_000);
    const account = await client.account(5 * YUAN);
    const [code] = await client.services.accounts.createRedemptionCodes({
      amount: 2 * YUAN,
      count: 1,
    });
    await client.services.accounts.redeem(account.accountId, { code: code?.code });

    // Two days later: the member signs in and the money moves every way it can.
    client.clock.advance(2 * DAY_MS);
    const session = await consoleUser(
      client,
      `wallet-${randomUUID()}@example.test`,
      'member',
      account.accountId,
    );
    const member: Member = { ...account, email: session.email, signed: session };
    const named = await client.newKey(account.accountId, { name: 'nightly batch' });
    const chat = await client.call('POST', '/v1/chat/completions', {
      key: named.key,
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }], max_tokens: 40 },
    });
    expect(chat.statusCode, chat.body).toBe(200);
    const chatId = String(chat.headers['x-service-request-id']);
    const failed = await client.call('POST', '/v1/embeddings', {
      key: account.key,
      body: { model: 'sim-embed', input: 'no [sim:fail=500]' },
    });
    expect(failed.statusCode).toBe(502);
    const failedId = String(failed.headers['x-service-request-id']);
    const order = await openOrder(client, 10 * YUAN, member);
    const paid = await deliver(
      client,
      sessionEvent('evt_paid', 'checkout.session.completed', order),
    );
    expect(paid.json()).toMatchObject({ outcome: 'credited' });
    const refunded = await deliver(client, refundEvent('evt_refund', order, 200));
    expect(refunded.statusCode, refunded.body).toBe(200);
    const created = await client.call('POST', '/v1/images/generations', {
      key: named.key,
      body: { model: 'sim-image', prompt: 'a ledger', size: '256x256' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const image = await finishedTask(
      client,
      named.key,
      `/v1/images/${created.json<TaskBody>().id}`,
    );
    expect(image.billing.state).toBe('pending');
    // Last, so that no clock moves while it is unresolved: an unconfirmed request keeps its hold.
    const hung = await client.call('POST', '/v1/embeddings', {
      key: account.key,
      body: { model: 'sim-embed', input: 'wait [sim:hang]' },
    });
    expect(hung.statusCode).toBe(504);
    const hungId = String(hung.headers['x-service-request-id']);

    // The wallet: the account's money, and each open hold with what holds it and what ends it.
    const money = await client.balance(account.accountId);
    const shown = await wallet(client, member.signed);
    expect(shown).toMatchObject({
      object: 'wallet',
      account_id: account.accountId,
      currency: 'CNY_MICRO',
      ...money,
      owed: 0,
      holds_truncated: false,
    });
    expect(shown.held).toBeGreaterThan(0);
    expect(shown.holds.reduce((sum, hold) => sum + hold.amount, 0)).toBe(shown.held);
    const hint = expect.stringMatching(/^tgk_….{4}$/) as unknown;
    expect(shown.holds).toEqual([
      {
        id: expect.stringMatching(/^hold_/) as unknown,
        kind: 'task',
        request_id: image.request_id,
        task_id: image.id,
        model: 'sim-image',
        key: { name: 'nightly batch', hint },
        amount: image.billing.reserved_amount,
        since: expect.any(String) as unknown,
        status: 'succeeded',
        billing_state: 'pending',
        released_by: 'task_settled',
        until: new Date(image.settlement?.expires_at ?? '').toISOString(),
      },
      {
        id: expect.stringMatching(/^hold_/) as unknown,
        kind: 'request',
        request_id: hungId,
        task_id: null,
        model: 'sim-embed',
        key: { name: null, hint },
        amount: expect.any(Number) as unknown,
        since: expect.any(String) as unknown,
        status: 'submission_unknown',
        billing_state: null,
        released_by: 'request_reconciled',
        until: null,
      },
    ]);

    // Every movement of the three days, one page or three at a time: the same entries, the
    // same running balance, ending at the account's balance and held amount.
    const all = `from=${day(dayOne)}&to=${day(client.clock.now())}`;
    const [whole] = await movementPages(client, member.signed, all, 100);
    if (whole === undefined) throw new Error('no page');
    const movements = whole.data;
    expect(whole).toMatchObject({ opening_balance: 0, opening_held: 0, has_more: false });
    expectRunning(whole, movements);
    expect(movements.at(-1)).toMatchObject({ balance: money.balance, held: money.held });
    const paged = await movementPages(client, member.signed, all, 3);
    expect(paged.length).toBeGreaterThan(2);
    expect(paged.flatMap((page) => page.data)).toEqual(movements);
    expect(new Set(movements.map((movement) => movement.kind))).toEqual(
      new Set(['topup', 'redemption', 'hold', 'capture', 'release', 'refund']),
    );
    const of = (requestId: string) =>
      movements
        .filter((movement) => movement.request_id === requestId)
        .map(({ kind, amount, held_change: held, model, key }) => ({
          kind,
          amount,
          held,
          model,
          key,
        }));
    expect(of(chatId)).toEqual([
      {
        kind: 'hold',
        amount: 0,
        held: expect.any(Number) as unknown,
        model: 'sim-chat',
        key: { name: 'nightly batch', hint },
      },
      {
        kind: 'capture',
        amount: expect.any(Number) as unknown,
        held: expect.any(Number) as unknown,
        model: 'sim-chat',
        key: { name: 'nightly batch', hint },
      },
    ]);
    const [failedHold, failedRelease] = of(failedId);
    expect(failedRelease).toMatchObject({ kind: 'release', amount: 0 });
    expect(failedRelease?.held).toBe(-(failedHold?.held ?? 0));
    expect(of(hungId).map((movement) => movement.kind)).toEqual(['hold']);
    expect(
      movements.filter((movement) => movement.task_id === image.id).map((m) => m.kind),
    ).toEqual(['hold']);
    expect(movements.find((movement) => movement.kind === 'refund')).toMatchObject({
      amount: -2 * YUAN,
      held_change: 0,
      key: null,
      request_id: null,
    });

    // The account statement reads the same journal: its movements are the wallet's balance
    // movements, with the same running balance (the refund included).
    const statement = (await client.admin(
      'GET',
      `/admin/v1/accounts/${account.accountId}/statement?${all}`,
    )) as unknown as AccountStatement;
    expect(statement.closing_balance).toBe(money.balance);
    expect(
      statement.movements.map(({ id, kind, amount, balance }) => ({ id, kind, amount, balance })),
    ).toEqual(
      movements
        .filter((movement) => movement.kind !== 'hold' && movement.kind !== 'release')
        .map(({ id, kind, amount, balance }) => ({ id, kind, amount, balance })),
    );

    // A period: day one alone is its two credits; the next two days open with them.
    const [first] = await movementPages(
      client,
      member.signed,
      `from=${day(dayOne)}&to=${day(dayOne)}`,
      100,
    );
    expect(first?.data.map((movement) => [movement.kind, movement.balance])).toEqual([
      ['topup', 5 * YUAN],
      ['redemption', 7 * YUAN],
    ]);
    expect(first?.complete).toBe(true);
    const later = `from=${day(dayOne + DAY_MS)}&to=${day(client.clock.now())}`;
    const [rest] = await movementPages(client, member.signed, later, 100);
    expect(rest).toMatchObject({ opening_balance: 7 * YUAN, opening_held: 0, complete: false });
    expect(rest?.data).toEqual(movements.slice(2));

    // The same period as CSV: the statement's columns, then held and the key; micro-yuan integers.
    const csv = await consoleCall(client, 'GET', `/console/api/wallet/statement.csv?${later}`, {
      signed: member.signed,
    });
    expect(csv.statusCode, csv.body).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    expect(csv.headers['content-disposition']).toBe(
      `attachment; filename="wallet-${account.accountId}-${day(dayOne + DAY_MS)}-${day(client.clock.now())}.csv"`,
    );
    const [header, ...records] = parseCsv(csv.body);
    const columns = [...CSV_HEADER, ...WALLET_CSV_COLUMNS];
    expect(header).toEqual(columns);
    const cell = (record: string[] | undefined, column: (typeof columns)[number]) =>
      record?.[columns.indexOf(column)];
    const opening = records[0];
    const closing = records.at(-1);
    expect([cell(opening, 'kind'), cell(opening, 'balance'), cell(opening, 'held')]).toEqual([
      'opening',
      String(7 * YUAN),
      '0',
    ]);
    expect([cell(closing, 'kind'), cell(closing, 'balance'), cell(closing, 'held')]).toEqual([
      'closing',
      String(money.balance),
      String(money.held),
    ]);
    const body = records.slice(1, -1);
    expect(body.map((record) => cell(record, 'journal_id'))).toEqual(
      movements.slice(2).map((movement) => movement.id),
    );
    for (const record of body)
      for (const column of ['amount', 'balance', 'held_change', 'held'] as const)
        expect(cell(record, column), `${column} of ${cell(record, 'journal_id')}`).toMatch(INTEGER);
    expect(body.map((record) => cell(record, 'balance'))).toEqual(
      movements.slice(2).map((movement) => String(movement.balance)),
    );
    const chatCapture = body.find(
      (record) => cell(record, 'request_id') === chatId && cell(record, 'kind') === 'capture',
    );
    expect(cell(chatCapture, 'key_name')).toBe('nightly batch');
    expect(cell(chatCapture, 'key_hint')).toMatch(/^tgk_…/);
  }, 60_000);

  it('a member sees only their own account: holds, movements, CSV; an operator and a key are refused', async () => {
    const client = await start();
    const member = await signedInMember(client, 3 * YUAN);
    const stranger = await signedInMember(client, 4 * YUAN);
    const unconfirmed: Record<string, string> = {};
    for (const [who, key] of [
      ['member', member.key],
      ['stranger', stranger.key],
    ] as const) {
      const chat = await client.call('POST', '/v1/chat/completions', {
        key,
        body: { model: 'sim-chat', messages: [{ role: 'user', content: who }], max_tokens: 20 },
      });
      expect(chat.statusCode, chat.body).toBe(200);
      const hung = await client.call('POST', '/v1/embeddings', {
        key,
        body: { model: 'sim-embed', input: `${who} [sim:hang]` },
      });
      expect(hung.statusCode).toBe(504);
      unconfirmed[who] = String(hung.headers['x-service-request-id']);
    }

    const mine = await wallet(client, member.signed);
    const theirs = await wallet(client, stranger.signed);
    expect(mine.account_id).toBe(member.accountId);
    expect(mine.holds.map((hold) => hold.request_id)).toEqual([unconfirmed['member']]);
    expect(theirs.holds.map((hold) => hold.request_id)).toEqual([unconfirmed['stranger']]);
    expect(mine.balance).toBe((await client.balance(member.accountId)).balance);

    const today = `from=${day(client.clock.now())}&to=${day(client.clock.now())}`;
    const [own] = await movementPages(client, member.signed, today, 100);
    const [other] = await movementPages(client, stranger.signed, today, 100);
    const journal = await client.services.store.db
      .selectFrom('journal')
      .select(['id', 'account_id'])
      .execute();
    const accountOf = new Map(journal.map((entry) => [entry.id, entry.account_id]));
    expect(own?.data.length).toBeGreaterThan(0);
    expect(own?.data.every((movement) => accountOf.get(movement.id) === member.accountId)).toBe(
      true,
    );
    expect(other?.data.every((movement) => accountOf.get(movement.id) === stranger.accountId)).toBe(
      true,
    );
    // Another member's cursor only says where to start: the page is still the member's own.
    const [firstPage] = await movementPages(client, stranger.signed, today, 1);
    const cursor = firstPage?.next_cursor ?? '';
    const fromTheirs = await consoleCall(
      client,
      'GET',
      `/console/api/wallet/movements?${today}&cursor=${cursor}`,
      { signed: member.signed },
    );
    expect(fromTheirs.statusCode).toBe(200);
    for (const movement of fromTheirs.json<WalletMovementList>().data)
      expect(accountOf.get(movement.id)).toBe(member.accountId);
    const csv = await consoleCall(client, 'GET', `/console/api/wallet/statement.csv?${today}`, {
      signed: member.signed,
    });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-disposition']).toContain(`wallet-${member.accountId}-`);
    const [header, ...records] = parseCsv(csv.body);
    const journalId = header?.indexOf('journal_id') ?? -1;
    expect(records.slice(1, -1).map((record) => record[journalId])).toEqual(
      own?.data.map((movement) => movement.id),
    );
    for (const movement of other?.data ?? []) expect(csv.body).not.toContain(movement.id);
    expect(csv.body).not.toContain(unconfirmed['stranger']);

    // An operator has no wallet (403 before the query is read); an API key is not a session.
    const operator = await consoleUser(client, `ops-${randomUUID()}@example.test`, 'operator');
    for (const url of [
      '/console/api/wallet',
      '/console/api/wallet/movements?from=nonsense',
      '/console/api/wallet/statement.csv',
    ]) {
      const refused = await consoleCall(client, 'GET', url, { signed: operator });
      expect(refused.statusCode, url).toBe(403);
      const keyed = await client.app.inject({
        method: 'GET',
        url,
        headers: { authorization: `Bearer ${member.key}` },
      });
      expect(keyed.statusCode, url).toBe(401);
      const anonymous = await consoleCall(client, 'GET', url);
      expect(anonymous.statusCode, url).toBe(401);
    }
  }, 60_000);

  it('a bad query is a 400 naming the field, in the error shape', async () => {
    const client = await start();
    const member = await signedInMember(client, YUAN);
    const cases: [string, string][] = [
      ['/console/api/wallet/movements?from=2026-03-10&to=2026-03-01', 'from'],
      ['/console/api/wallet/movements?from=2026-02-30', 'from'],
      ['/console/api/wallet/movements?to=yesterday', 'to'],
      ['/console/api/wallet/movements?cursor=not-a-cursor', 'cursor'],
      ['/console/api/wallet/movements?limit=0', 'limit'],
      ['/console/api/wallet/movements?limit=101', 'limit'],
      ['/console/api/wallet/movements?format=csv', 'querystring.format'],
      ['/console/api/wallet/statement.csv?from=2026-11-02&to=2026-11-01', 'from'],
      ['/console/api/wallet/statement.csv?to=2026-13-01', 'to'],
      ['/console/api/wallet/statement.csv?cursor=x', 'querystring.cursor'],
    ];
    for (const [url, param] of cases) {
      const answer = await consoleCall(client, 'GET', url, { signed: member.signed });
      expect(answer.statusCode, url).toBe(400);
      expect(answer.json(), url).toMatchObject({
        error: { code: 'INVALID_INPUT', param, message: expect.any(String) as unknown },
      });
    }
  });
});
