import type {
  AccountStatement,
  StatementMovement,
  StatementMovementKind,
} from '@tollgate/protocol';
import { sql, type Kysely } from 'kysely';
import { notFound } from '../errors/api-error.js';
import type { Database } from '../store/schema.js';
import type { Clock } from '../util/effects.js';
import { parseDayRange, startOfMonth, type DayRange } from './days.js';
import { exactSum, safeAmount } from './exact-sum.js';

/** Everything of a statement that is known before its movements are read. */
export type StatementHeader = Omit<AccountStatement, 'movements' | 'totals' | 'closing_balance'>;

/** What walking a statement yields: each movement in order, then its totals and closing balance. */
export type StatementEvent =
  | { readonly kind: 'movement'; readonly movement: StatementMovement }
  | {
      readonly kind: 'end';
      readonly totals: AccountStatement['totals'];
      readonly closingBalance: number;
    };

/** A statement ready to be written: its header, and its movements read page by page. */
export interface PreparedStatement {
  readonly header: StatementHeader;
  /** Single pass; each call reads the journal again from the start of the period. */
  events(): AsyncGenerator<StatementEvent>;
}

export const statementQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { type: 'string' },
    to: { type: 'string' },
    format: { enum: ['json', 'csv'] },
  },
} as const;

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

/** Balance movements: holds and releases change `held` only, never the balance. */
const MOVEMENT_KINDS: readonly StatementMovementKind[] = ['topup', 'redemption', 'capture'];

/**
 * The order of a statement, and of its keyset pages: by time; within one millisecond credits
 * before charges (so a running balance never dips below zero where a top-up and the capture it
 * paid for share a millisecond), then by journal id. Literal SQL, no parameters.
 */
const CHARGE_LAST = sql<number>`case when journal.balance_delta < 0 then 1 else 0 end`;

interface Position {
  createdAt: number;
  chargeLast: number;
  id: string;
}

/**
 * Account statements (docs/usage.md, "Statements"): every balance movement of a period from the
 * journal, with the opening balance (the sum of every movement before the period) and a running
 * balance, so `opening + Σ amounts = closing` holds by construction and, the journal replaying to
 * the account's columns (billing/ledger-check.ts), the closing balance of a period that ends now
 * is the account's balance. Pages of `pageSize` entries are read one query at a time, never in
 * one long transaction: on SQLite that would hold the one connection every request needs.
 */
export class Statements {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly pageSize = 1_000,
  ) {}

  /** Reads the account (404 when there is none) and its opening balance. */
  async prepare(accountId: string, period: DayRange): Promise<PreparedStatement> {
    const account = await this.db
      .selectFrom('accounts')
      .select(['id', 'email'])
      .where('id', '=', accountId)
      .executeTakeFirst();
    if (account === undefined) throw notFound('account');
    const opening = await this.db
      .selectFrom('journal')
      .select(exactSum('balance_delta').as('balance'))
      .where('account_id', '=', accountId)
      .where('created_at', '<', period.start)
      .executeTakeFirstOrThrow();
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
      opening_balance: safeAmount(opening.balance),
    };
    return { header, events: () => this.walk(header, period) };
  }

  private async *walk(header: StatementHeader, period: DayRange): AsyncGenerator<StatementEvent> {
    // Exact arithmetic: every balance is a safe integer, but a period's turnover need not be.
    let balance = BigInt(header.opening_balance);
    let credits = 0n;
    let debits = 0n;
    let count = 0;
    let after: Position | null = null;
    for (;;) {
      const rows = await this.page(header.account_id, period, after);
      for (const row of rows) {
        const amount = BigInt(row.amount);
        balance += amount;
        if (amount > 0n) credits += amount;
        else debits -= amount;
        count += 1;
        yield {
          kind: 'movement',
          movement: {
            id: row.id,
            time: new Date(row.created_at).toISOString(),
            kind: row.kind as StatementMovementKind,
            amount: safeAmount(row.amount),
            balance: safeAmount(balance.toString()),
            description: row.reason,
            reference: row.reference,
            request_id: row.request_id,
            task_id: row.task_id,
            model: row.model,
            price_version: row.price_version,
          },
        };
      }
      const last = rows.at(-1);
      if (last === undefined || rows.length < this.pageSize) break;
      after = { createdAt: last.created_at, chargeLast: Number(last.charge_last), id: last.id };
    }
    yield {
      kind: 'end',
      totals: {
        movements: count,
        credits: safeAmount(credits.toString()),
        debits: safeAmount(debits.toString()),
      },
      closingBalance: safeAmount(balance.toString()),
    };
  }

  private page(accountId: string, period: DayRange, after: Position | null) {
    let query = this.db
      .selectFrom('journal')
      .leftJoin('topups', 'topups.id', 'journal.topup_id')
      .leftJoin('holds', 'holds.id', 'journal.hold_id')
      .leftJoin('model_prices', 'model_prices.price_version', 'holds.price_version')
      // A task's hold belongs to its creation request (tasks_request index).
      .leftJoin('tasks', 'tasks.request_id', 'journal.request_id')
      .select([
        'journal.id as id',
        'journal.created_at as created_at',
        'journal.kind as kind',
        sql<string>`cast(journal.balance_delta as text)`.as('amount'),
        'journal.reason as reason',
        'journal.request_id as request_id',
        'topups.reference as reference',
        'tasks.id as task_id',
        'model_prices.model as model',
        'holds.price_version as price_version',
        CHARGE_LAST.as('charge_last'),
      ])
      .where('journal.account_id', '=', accountId)
      .where('journal.kind', 'in', MOVEMENT_KINDS)
      .where('journal.created_at', '>=', period.start)
      .where('journal.created_at', '<', period.end);
    if (after !== null)
      query = query.where((eb) =>
        eb.or([
          eb('journal.created_at', '>', after.createdAt),
          eb.and([
            eb('journal.created_at', '=', after.createdAt),
            eb.or([
              eb(CHARGE_LAST, '>', after.chargeLast),
              eb.and([eb(CHARGE_LAST, '=', after.chargeLast), eb('journal.id', '>', after.id)]),
            ]),
          ]),
        ]),
      );
    return query
      .orderBy('journal.created_at')
      .orderBy(CHARGE_LAST)
      .orderBy('journal.id')
      .limit(this.pageSize)
      .execute();
  }
}
