import type {
  AccountStatement,
  StatementMovement,
  StatementMovementKind,
  WalletKey,
  WalletMovement,
  WalletMovementKind,
  WalletMovementList,
} from '@tollgate/protocol';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { z } from 'zod';
import { keyHint } from '../auth/key-view.js';
import { invalidInput, notFound } from '../errors/api-error.js';
import { jsonSchemaOf, valuesOnly } from '../errors/input-schema.js';
import type { Database } from '../store/schema.js';
import type { Clock } from '../util/effects.js';
import { parseDayRange, startOfMonth, type DayRange } from './days.js';
import { exactSum, safeAmount } from '../billing/exact-sum.js';

/** Everything of a statement that is known before its movements are read. */
export type StatementHeader = Omit<AccountStatement, 'movements' | 'totals' | 'closing_balance'>;

/**
 * Which journal entries a statement lists: `statement`, the entries that move the balance (an
 * account statement, docs/usage.md); `wallet`, every entry, holds and releases too (a member's
 * wallet, docs/console.md "Wallet"), each with the held amount after it as well.
 */
export type StatementScope = 'statement' | 'wallet';

/**
 * A journal entry as statements and wallets read it: a wallet's movement, every field known (its
 * `held` is the held amount after it only in a wallet, which reads every entry).
 */
export type JournalMovement = WalletMovement;

/** What walking a statement yields: each movement in order, then its totals and closing balance. */
export type StatementEvent =
  | { readonly kind: 'movement'; readonly movement: JournalMovement }
  | {
      readonly kind: 'end';
      readonly totals: AccountStatement['totals'];
      readonly closingBalance: number;
      /** The held amount at the end: a wallet's only (a statement lists no hold nor release). */
      readonly closingHeld: number | null;
    };

/** A statement ready to be written: its header, and its movements read page by page. */
export interface PreparedStatement {
  readonly header: StatementHeader;
  readonly scope: StatementScope;
  /** The held amount at `period_start` (a wallet's export shows it). */
  readonly openingHeld: number;
  /** Single pass; each call reads the journal again from the start of the period. */
  events(): AsyncGenerator<StatementEvent>;
}

/** `?from=&to=` (UTC days) and `?format=json|csv`, each optional, and no other parameter. */
const statementQuery = z.strictObject({
  from: z.string().optional(),
  to: z.string().optional(),
  format: valuesOnly(z.enum(['json', 'csv'])).optional(),
});
export const statementQuerySchema = jsonSchemaOf(statementQuery);
export type StatementQueryString = z.output<typeof statementQuery>;

/**
 * `from`/`to` (UTC days, both included) into a period: `to` defaults to today, `from` to the
 * first day of `to`'s month — so no parameter at all is this month so far, and `to` alone is that
 * month up to that day. No length limit: a statement is written as it is read.
 */
export function parseStatementPeriod(
  query: { from?: string | undefined; to?: string | undefined },
  now: number,
): DayRange {
  return parseDayRange(query, { now, defaultFrom: startOfMonth });
}

/**
 * Balance movements: credits, charges and refunds taken back. Holds and releases change `held`
 * only, never the balance: a wallet lists them too.
 */
const SCOPE_KINDS: Readonly<Record<StatementScope, readonly WalletMovementKind[]>> = {
  statement: ['topup', 'redemption', 'capture', 'refund'] satisfies StatementMovementKind[],
  wallet: ['topup', 'redemption', 'hold', 'capture', 'release', 'refund'],
};

/**
 * The order of a statement, and of its keyset pages: by time; within one millisecond credits
 * before charges (so a running balance never dips below zero where a top-up and the capture it
 * paid for share a millisecond), then by journal id. Literal SQL, no parameters.
 */
const CHARGE_LAST = sql<number>`case when journal.balance_delta < 0 then 1 else 0 end`;

/** A journal entry's place in that order: a page starts after one, a running balance ends at one. */
export interface JournalPosition {
  readonly createdAt: number;
  readonly chargeLast: number;
  readonly id: string;
}

/** The entries after `position` in statement order. */
function afterPosition(position: JournalPosition): RawBuilder<boolean> {
  return sql<boolean>`(journal.created_at > ${position.createdAt} or (journal.created_at = ${position.createdAt} and (${CHARGE_LAST} > ${position.chargeLast} or (${CHARGE_LAST} = ${position.chargeLast} and journal.id > ${position.id}))))`;
}

/**
 * A wallet page's cursor: base64url of `<created_at>.<charge_last>.<id>` of the page's last
 * entry. A forged one only moves where the member's own list starts (every read is bounded to
 * the account, and the running balance is summed from the journal up to it), so it is checked
 * for shape, not signed.
 */
export function encodeJournalPosition(position: JournalPosition): string {
  return Buffer.from(`${position.createdAt}.${position.chargeLast}.${position.id}`).toString(
    'base64url',
  );
}

const POSITION = /^([0-9]{1,16})\.([01])\.([A-Za-z0-9_-]{1,100})$/;

export function decodeJournalPosition(value: string): JournalPosition {
  const match = POSITION.exec(Buffer.from(value, 'base64url').toString('utf8'));
  const createdAt = Number(match?.[1]);
  if (match === null || !Number.isSafeInteger(createdAt) || match[3] === undefined)
    throw invalidInput('cursor', "is not a cursor this server gave; pass a page's next_cursor");
  return { createdAt, chargeLast: Number(match[2]), id: match[3] };
}

/** An entry as read, amounts as exact text. */
interface JournalRow {
  id: string;
  created_at: number;
  kind: WalletMovementKind;
  amount: string;
  held_change: string;
  reason: string;
  request_id: string | null;
  reference: string | null;
  task_id: string | null;
  model: string | null;
  price_version: string | null;
  key_name: string | null;
  key_hint: string | null;
  charge_last: number | string;
}

/** Running sums: the balance and the held amount after an entry, exact. */
interface Running {
  balance: bigint;
  held: bigint;
}

/**
 * Account statements (docs/usage.md, "Statements") and members' wallets (docs/console.md,
 * "Wallet"): the journal entries of a period, with the opening balance (the sum of every entry
 * before the period) and a running balance, so `opening + Σ amounts = closing` holds by
 * construction and, the journal replaying to the account's columns (billing/ledger-check.ts), the
 * closing balance of a period that ends now is the account's balance. Pages of `pageSize` entries
 * are read one query at a time, never in one long transaction: on SQLite that would hold the one
 * connection every request needs.
 */
export class Statements {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly pageSize = 1_000,
  ) {}

  /** Reads the account (404 when there is none) and its opening balance. */
  async prepare(
    accountId: string,
    period: DayRange,
    scope: StatementScope = 'statement',
  ): Promise<PreparedStatement> {
    const account = await this.db
      .selectFrom('accounts')
      .select(['id', 'email'])
      .where('id', '=', accountId)
      .executeTakeFirst();
    if (account === undefined) throw notFound('account');
    const opening = await this.sumsBefore(accountId, period.start);
    const header: StatementHeader = {
      object: 'account.statement',
      account_id: account.id,
      email: account.email,
      currency: 'CNY_MICRO',
      from: period.from,
      to: period.to,
      period_start: new Date(period.start).toISOString(),
      period_end: new Date(period.end).toISOString(),
      complete: period.end <= this.clock.now(),
      opening_balance: safeAmount(opening.balance.toString()),
    };
    return {
      header,
      scope,
      openingHeld: safeAmount(opening.held.toString()),
      events: () => this.walk(header, period, scope, opening),
    };
  }

  /**
   * One page of a member's wallet: the period's entries of every kind after `cursor`, each with
   * the balance and the held amount after it. The sums a page starts from are the journal's own,
   * up to the entry before the page (the opening sums on the first page), so every page's
   * running balance is exact whichever page is read first.
   */
  async walletPage(
    accountId: string,
    period: DayRange,
    cursor: JournalPosition | null,
    limit: number,
  ): Promise<WalletMovementList> {
    const opening = await this.sumsBefore(accountId, period.start);
    const inPeriod = cursor !== null && cursor.createdAt >= period.start;
    const start = inPeriod ? await this.sumsThrough(accountId, cursor) : opening;
    const rows = await this.rows(accountId, period, 'wallet', inPeriod ? cursor : null, limit + 1);
    const running = { ...start };
    const data = rows.slice(0, limit).map((row) => movementOf(row, running));
    const last = rows.length > limit ? rows[limit - 1] : undefined;
    return {
      object: 'list',
      currency: 'CNY_MICRO',
      from: period.from,
      to: period.to,
      period_start: new Date(period.start).toISOString(),
      period_end: new Date(period.end).toISOString(),
      complete: period.end <= this.clock.now(),
      opening_balance: safeAmount(opening.balance.toString()),
      opening_held: safeAmount(opening.held.toString()),
      data,
      has_more: last !== undefined,
      next_cursor: last === undefined ? null : encodeJournalPosition(positionOf(last)),
    };
  }

  private async *walk(
    header: StatementHeader,
    period: DayRange,
    scope: StatementScope,
    opening: Running,
  ): AsyncGenerator<StatementEvent> {
    // Exact arithmetic: every balance is a safe integer, but a period's turnover need not be.
    const running = { ...opening };
    let credits = 0n;
    let debits = 0n;
    let count = 0;
    let after: JournalPosition | null = null;
    for (;;) {
      const rows = await this.rows(header.account_id, period, scope, after, this.pageSize);
      for (const row of rows) {
        const amount = BigInt(row.amount);
        if (amount > 0n) credits += amount;
        else debits -= amount;
        count += 1;
        yield { kind: 'movement', movement: movementOf(row, running) };
      }
      const last = rows.at(-1);
      if (last === undefined || rows.length < this.pageSize) break;
      after = positionOf(last);
    }
    yield {
      kind: 'end',
      totals: {
        movements: count,
        credits: safeAmount(credits.toString()),
        debits: safeAmount(debits.toString()),
      },
      closingBalance: safeAmount(running.balance.toString()),
      closingHeld: scope === 'wallet' ? safeAmount(running.held.toString()) : null,
    };
  }

  /** The balance and held amount before `start`: every entry of the account before it. */
  private sumsBefore(accountId: string, start: number): Promise<Running> {
    return this.sums(accountId, { before: start });
  }

  /** The balance and held amount after the entry at `position`, in statement order. */
  private sumsThrough(accountId: string, position: JournalPosition): Promise<Running> {
    return this.sums(accountId, { through: position });
  }

  private async sums(
    accountId: string,
    bound: { readonly before: number } | { readonly through: JournalPosition },
  ): Promise<Running> {
    let query = this.db
      .selectFrom('journal')
      .select([exactSum('balance_delta').as('balance'), exactSum('held_delta').as('held')])
      .where('journal.account_id', '=', accountId);
    query =
      'before' in bound
        ? query.where('journal.created_at', '<', bound.before)
        : query
            .where('journal.created_at', '<=', bound.through.createdAt)
            .where(sql<boolean>`not ${afterPosition(bound.through)}`);
    const sums = await query.executeTakeFirstOrThrow();
    return { balance: BigInt(sums.balance), held: BigInt(sums.held) };
  }

  /** Up to `limit` entries of `scope` in the period, after `after`, in statement order. */
  private rows(
    accountId: string,
    period: DayRange,
    scope: StatementScope,
    after: JournalPosition | null,
    limit: number,
  ): Promise<JournalRow[]> {
    let query = this.db
      .selectFrom('journal')
      .leftJoin('topups', 'topups.id', 'journal.topup_id')
      .leftJoin('holds', 'holds.id', 'journal.hold_id')
      .leftJoin('model_prices', 'model_prices.price_version', 'holds.price_version')
      // A task's hold belongs to its creation request (tasks_request index).
      .leftJoin('tasks', 'tasks.request_id', 'journal.request_id')
      // The key that made the request (a task's creation request for a task).
      .leftJoin('requests', 'requests.id', 'journal.request_id')
      .leftJoin('api_keys', 'api_keys.id', 'requests.key_id')
      .select([
        'journal.id as id',
        'journal.created_at as created_at',
        'journal.kind as kind',
        sql<string>`cast(journal.balance_delta as text)`.as('amount'),
        sql<string>`cast(journal.held_delta as text)`.as('held_change'),
        'journal.reason as reason',
        'journal.request_id as request_id',
        'topups.reference as reference',
        'tasks.id as task_id',
        'model_prices.model as model',
        'holds.price_version as price_version',
        'api_keys.name as key_name',
        'api_keys.key_hint as key_hint',
        CHARGE_LAST.as('charge_last'),
      ])
      .where('journal.account_id', '=', accountId)
      .where('journal.kind', 'in', SCOPE_KINDS[scope])
      .where('journal.created_at', '>=', period.start)
      .where('journal.created_at', '<', period.end);
    if (after !== null) query = query.where(afterPosition(after));
    return query
      .orderBy('journal.created_at')
      .orderBy(CHARGE_LAST)
      .orderBy('journal.id')
      .limit(limit)
      .execute();
  }
}

function positionOf(row: JournalRow): JournalPosition {
  return { createdAt: row.created_at, chargeLast: Number(row.charge_last), id: row.id };
}

/** The entry as a movement, `running` moved past it (exact: BigInt, then a safe integer). */
function movementOf(row: JournalRow, running: Running): JournalMovement {
  running.balance += BigInt(row.amount);
  running.held += BigInt(row.held_change);
  const key: WalletKey | null =
    row.key_hint === null ? null : { name: row.key_name, hint: keyHint(row.key_hint) };
  return {
    id: row.id,
    time: new Date(row.created_at).toISOString(),
    kind: row.kind,
    amount: safeAmount(row.amount),
    held_change: safeAmount(row.held_change),
    balance: safeAmount(running.balance.toString()),
    held: safeAmount(running.held.toString()),
    description: row.reason,
    reference: row.reference,
    request_id: row.request_id,
    task_id: row.task_id,
    model: row.model,
    key,
    price_version: row.price_version,
  };
}

/** An entry of an account statement (scope `statement`: its kinds are balance movements). */
export function statementMovementOf(movement: JournalMovement): StatementMovement {
  return {
    id: movement.id,
    time: movement.time,
    kind: movement.kind as StatementMovementKind,
    amount: movement.amount,
    balance: movement.balance,
    description: movement.description,
    reference: movement.reference,
    request_id: movement.request_id,
    task_id: movement.task_id,
    model: movement.model,
    price_version: movement.price_version,
  };
}
