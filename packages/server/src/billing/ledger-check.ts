import type { LedgerReport, LedgerViolation } from '@tollgate/protocol';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../store/schema.js';
import { MAX_BALANCE_MICRO_YUAN } from './money.js';
import { withPendingEvents } from './ledger-check-pending.js';

/**
 * Verifies every ledger invariant (docs/billing.md):
 *  1. journal replay: each account's balance, held and owed equal the sums of its journal deltas;
 *  2. nothing negative: balance >= 0, held >= 0, balance - held >= 0, owed >= 0; and an account
 *     that owes (a refund not yet taken back) has nothing available (`owed_paid_first`: what
 *     becomes available pays it first, billing/ledger.ts `payOwed`);
 *  3. held equals the sum of the account's open holds;
 *  4. one resolution per hold: an open hold has one `hold` entry and none else; a resolved one
 *     has exactly one `capture` or `release` entry matching its state and captured amount;
 *  5. one capture per request, and the request's bill equals the capture and carries the
 *     hold's price version;
 *  6. conservation: the sum of balances equals top-ups minus captures minus refunds taken back
 *     (journal `refund` entries); and per account, those refunds plus what it still owes equal
 *     what its payment orders say was refunded (docs/payments.md);
 *  7. bounds: no balance or held above MAX_BALANCE_MICRO_YUAN, every amount an integer;
 *  8. a task's billing state matches its hold (settled: captured; released or expired: released;
 *     else open),
 *     and a task's settled amount is its capture (5, through its creation record).
 * With `accounting.event_log`, the log's pending events count as the rows the projector will make
 * of them (ledger-check-pending.ts): the accounts moved when they were written.
 * Arithmetic is exact: every amount and every SQL sum is read as text (`cast(... as text)`;
 * `pg` would hand sums over as strings anyway, better-sqlite3 as lossy numbers past 2^53) and
 * compared as BigInt, so a one-micro-yuan difference is found at any magnitude, whatever wrote it.
 * Every table is read in one pass, all inside one read transaction: on PostgreSQL a REPEATABLE
 * READ snapshot, so money moved by other instances between two reads cannot look like a
 * difference on a busy cluster; on SQLite one transaction of the store's single connection
 * (writes of this process wait for it; other processes' commits are not seen mid-check).
 */
export async function checkLedger(db: Kysely<Database>): Promise<LedgerReport> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute((snapshot) => checkLedgerInSnapshot(snapshot));
}

async function checkLedgerInSnapshot(db: Kysely<Database>): Promise<LedgerReport> {
  const violations: LedgerViolation[] = [];
  const add = (invariant: string, subject: string, detail: string) =>
    violations.push({ invariant, subject, detail });
  /** An amount read as text; anything but an integer is itself a violation (counted as 0). */
  const exact = (text: string | null, subject: string, column: string): bigint => {
    if (text !== null && INTEGER.test(text)) return BigInt(text);
    add('integer_amounts', subject, `${column} is ${String(text)}`);
    return 0n;
  };
  const exactOrNull = (text: string | null, subject: string, column: string) =>
    text === null ? null : exact(text, subject, column);

  const accounts = await db
    .selectFrom('accounts')
    .select([
      'id',
      asText('balance').as('balance'),
      asText('held').as('held'),
      asText('owed').as('owed'),
    ])
    .execute();
  const journalSums = await db
    .selectFrom('journal')
    .select([
      'account_id',
      sql<string>`cast(coalesce(sum(balance_delta), 0) as text)`.as('balance'),
      sql<string>`cast(coalesce(sum(held_delta), 0) as text)`.as('held'),
      sql<string>`cast(coalesce(sum(owed_delta), 0) as text)`.as('owed'),
    ])
    .groupBy('account_id')
    .execute();
  const holdRows = await db
    .selectFrom('holds')
    .select([
      'id',
      'account_id',
      'request_id',
      'state',
      'price_version',
      asText('amount').as('amount'),
      asText('captured_amount').as('captured_amount'),
    ])
    .execute();
  const entryRows = await db
    .selectFrom('journal')
    .select([
      'id',
      'hold_id',
      'kind',
      asText('balance_delta').as('balance_delta'),
      asText('held_delta').as('held_delta'),
    ])
    .where('hold_id', 'is not', null)
    .execute();
  const topups = await db
    .selectFrom('topups')
    .select(sql<string>`cast(coalesce(sum(amount), 0) as text)`.as('total'))
    .executeTakeFirst();
  const refunds = await db
    .selectFrom('journal')
    .select(['account_id', sql<string>`cast(coalesce(sum(-balance_delta), 0) as text)`.as('total')])
    .where('kind', '=', 'refund')
    .groupBy('account_id')
    .execute();
  const orderRefunds = await db
    .selectFrom('payment_orders')
    .select([
      'account_id',
      sql<string>`cast(coalesce(sum(refunded_amount), 0) as text)`.as('total'),
    ])
    .groupBy('account_id')
    .execute();
  // A task's creation record (`accepted`) holds for its task: the bill is the task's settlement.
  const requestRows = await db
    .selectFrom('requests')
    .leftJoin('tasks', 'tasks.id', 'requests.task_id')
    .select([
      'requests.id as id',
      'requests.hold_id as hold_id',
      sql<
        string | null
      >`cast(case when requests.task_id is null then requests.amount else tasks.settled_amount end as text)`.as(
        'amount',
      ),
      'requests.price_version as price_version',
      'requests.status as status',
      'tasks.id as task_id',
      'tasks.billing_state as task_billing',
    ])
    .where('requests.hold_id', 'is not', null)
    .execute();
  // The event log's pending events, as the projector will write them (ledger-check-pending.ts).
  const { sums, holds, entries, requests } = await withPendingEvents(db, {
    sums: journalSums,
    holds: holdRows,
    entries: entryRows,
    requests: requestRows,
  });

  const journalByAccount = new Map(
    sums.map((row) => [
      row.account_id,
      {
        balance: exact(row.balance, row.account_id, 'journal balance sum'),
        held: exact(row.held, row.account_id, 'journal held sum'),
        owed: exact(row.owed, row.account_id, 'journal owed sum'),
      },
    ]),
  );
  const holdAmounts = new Map(
    holds.map((hold) => [
      hold.id,
      {
        amount: exact(hold.amount, hold.id, 'hold amount'),
        captured: exactOrNull(hold.captured_amount, hold.id, 'captured amount'),
      },
    ]),
  );
  const openHeld = new Map<string, bigint>();
  for (const hold of holds) {
    if (hold.state === 'open')
      openHeld.set(
        hold.account_id,
        (openHeld.get(hold.account_id) ?? 0n) + (holdAmounts.get(hold.id)?.amount ?? 0n),
      );
  }
  const refundedByAccount = new Map(
    refunds.map((row) => [row.account_id, exact(row.total, row.account_id, 'refund sum')]),
  );
  const ordersRefundedByAccount = new Map(
    orderRefunds.map((row) => [
      row.account_id,
      exact(row.total, row.account_id, 'payment orders refund sum'),
    ]),
  );
  let balances = 0n;
  let refunded = 0n;
  for (const account of accounts) {
    const balance = exact(account.balance, account.id, 'balance');
    const held = exact(account.held, account.id, 'held');
    const owed = exact(account.owed, account.id, 'owed');
    balances += balance;
    const replay = journalByAccount.get(account.id) ?? { balance: 0n, held: 0n, owed: 0n };
    if (replay.balance !== balance || replay.held !== held || replay.owed !== owed) {
      // balance/held, and /owed when either side has one.
      const owing = owed !== 0n || replay.owed !== 0n;
      add(
        'journal_replay',
        account.id,
        `columns ${balance}/${held}${owing ? `/${owed}` : ''}, journal ${replay.balance}/${replay.held}${owing ? `/${replay.owed}` : ''}`,
      );
    }
    if (balance < 0n || held < 0n || balance - held < 0n || owed < 0n)
      add(
        'non_negative',
        account.id,
        `balance ${balance}, held ${held}${owed === 0n ? '' : `, owed ${owed}`}`,
      );
    if (owed > 0n && balance - held > 0n)
      add('owed_paid_first', account.id, `owes ${owed} with ${balance - held} available`);
    const taken = refundedByAccount.get(account.id) ?? 0n;
    refunded += taken;
    const ordersRefunded = ordersRefundedByAccount.get(account.id) ?? 0n;
    if (taken + owed !== ordersRefunded)
      add(
        'refunds_match_orders',
        account.id,
        `journal refunds ${taken} + owed ${owed}, payment orders refunded ${ordersRefunded}`,
      );
    if (balance > MAX_BALANCE || held > MAX_BALANCE)
      add('within_bounds', account.id, `balance ${balance}, held ${held}, maximum ${MAX_BALANCE}`);
    const open = openHeld.get(account.id) ?? 0n;
    if (open !== held)
      add('held_matches_open_holds', account.id, `held ${held}, open holds ${open}`);
  }

  interface Entry {
    kind: string;
    balanceDelta: bigint;
    heldDelta: bigint;
  }
  const entriesByHold = new Map<string, Entry[]>();
  for (const entry of entries) {
    const list = entriesByHold.get(entry.hold_id ?? '') ?? [];
    list.push({
      kind: entry.kind,
      balanceDelta: exact(entry.balance_delta, entry.id, 'balance_delta'),
      heldDelta: exact(entry.held_delta, entry.id, 'held_delta'),
    });
    entriesByHold.set(entry.hold_id ?? '', list);
  }
  const holdById = new Map(holds.map((hold) => [hold.id, hold]));
  let captured = 0n;
  for (const hold of holds) {
    const { amount, captured: capturedAmount } = holdAmounts.get(hold.id) ?? {
      amount: 0n,
      captured: null,
    };
    const list = entriesByHold.get(hold.id) ?? [];
    const placed = list.filter((entry) => entry.kind === 'hold');
    const resolutions = list.filter(
      (entry) => entry.kind === 'capture' || entry.kind === 'release',
    );
    if (placed.length !== 1 || placed[0]?.heldDelta !== amount)
      add('one_hold_entry', hold.id, `${placed.length} hold entries`);
    const expected = hold.state === 'open' ? 0 : 1;
    if (resolutions.length !== expected) {
      add(
        'one_resolution_per_hold',
        hold.id,
        `state ${hold.state}, ${resolutions.length} resolutions`,
      );
      continue;
    }
    const resolution = resolutions[0];
    if (resolution === undefined) continue;
    if (resolution.kind === 'capture') captured += -resolution.balanceDelta;
    const kindMatches = (hold.state === 'captured') === (resolution.kind === 'capture');
    const amountMatches = hold.state !== 'captured' || -resolution.balanceDelta === capturedAmount;
    if (!kindMatches || !amountMatches || resolution.heldDelta !== -amount) {
      add(
        'resolution_matches_hold',
        hold.id,
        `state ${hold.state}, entry ${resolution.kind} ${resolution.balanceDelta}`,
      );
    }
  }

  const capturesPerRequest = new Map<string, number>();
  for (const hold of holds) {
    if (hold.state === 'captured')
      capturesPerRequest.set(hold.request_id, (capturesPerRequest.get(hold.request_id) ?? 0) + 1);
  }
  for (const [requestId, count] of capturesPerRequest) {
    if (count > 1) add('one_capture_per_request', requestId, `${count} captures`);
  }
  for (const request of requests) {
    const hold = holdById.get(request.hold_id ?? '');
    if (hold === undefined) {
      add('request_hold_exists', request.id, `hold ${request.hold_id} missing`);
      continue;
    }
    if (hold.request_id !== request.id)
      add('request_hold_exists', request.id, `hold belongs to ${hold.request_id}`);
    if (request.task_id !== null && request.task_billing !== null) {
      const expected = TASK_HOLD_STATES[request.task_billing];
      if (hold.state !== expected)
        add(
          'task_billing_matches_hold',
          request.task_id,
          `billing ${request.task_billing}, hold ${hold.state} (expected ${expected})`,
        );
    }
    const bill = exactOrNull(request.amount, request.id, 'request amount');
    const capturedAmount = holdAmounts.get(hold.id)?.captured ?? null;
    if (
      hold.state === 'captured' &&
      (bill !== capturedAmount || request.price_version !== hold.price_version)
    ) {
      add(
        'capture_matches_bill',
        request.id,
        `bill ${bill} @ ${request.price_version}, capture ${capturedAmount} @ ${hold.price_version}`,
      );
    }
  }

  const credited = exact(topups?.total ?? '0', 'all accounts', 'top-up sum');
  if (balances !== credited - captured - refunded)
    add(
      'conservation',
      'all accounts',
      `balances ${balances}, top-ups ${credited} - captured ${captured}${refunded === 0n ? '' : ` - refunded ${refunded}`}`,
    );

  return {
    ok: violations.length === 0,
    accounts: accounts.length,
    holds: holds.length,
    hold_journal_entries: entries.length,
    violations,
  };
}

/**
 * The state of a task's hold for each billing state: settled is captured, released and expired
 * (not settled within the window: nothing charged) released, else open.
 */
const TASK_HOLD_STATES = {
  reserved: 'open',
  pending: 'open',
  settled: 'captured',
  released: 'released',
  expired: 'released',
} as const;

const INTEGER = /^-?[0-9]+$/;
const MAX_BALANCE = BigInt(MAX_BALANCE_MICRO_YUAN);

/** A column as exact decimal text, on both dialects (NULL stays NULL). */
function asText(column: string): RawBuilder<string | null> {
  return sql<string | null>`cast(${sql.ref(column)} as text)`;
}
