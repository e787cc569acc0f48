import { z } from 'zod';
import { jsonSchemaOf } from '../errors/input-schema.js';
import type { AccountUsage, UsageModelTotal, UsageRow } from '@tollgate/protocol';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import { DAY_MS, dayOf, parseDayRange, type DayRange } from './days.js';
import { exactSum, safeAmount } from '../billing/exact-sum.js';

/** The longest range one usage read covers: a year, leap day included. */
export const MAX_USAGE_DAYS = 366;
/** Without `from`: the 30 days ending with `to` (both included). */
const DEFAULT_USAGE_DAYS = 30;

/** `?from=&to=`, UTC days, both optional, and no other parameter. */
const usageQuery = z.strictObject({ from: z.string().optional(), to: z.string().optional() });
export const usageQuerySchema = jsonSchemaOf(usageQuery);
export type UsageQueryString = z.output<typeof usageQuery>;

/** `?from=&to=` (UTC days, both optional) into the range to read; see `parseDayRange`. */
export function parseUsageRange(query: UsageQueryString, now: number): DayRange {
  return parseDayRange(query, {
    now,
    defaultFrom: (toStart) => toStart - (DEFAULT_USAGE_DAYS - 1) * DAY_MS,
    maxDays: MAX_USAGE_DAYS,
  });
}

// Literal SQL (no parameters): PostgreSQL matches a grouped expression to the selected one by
// its text, and two parameter slots would be two different expressions.
export const DAY_NUMBER = sql<number>`journal.created_at / 86400000`;
/** The model of the capture's price version; the version itself if it was never in the book. */
export const MODEL = sql<string>`coalesce(model_prices.model, holds.price_version)`;
/** How many captures a group holds (a capture of 0 included) and what they charged, exactly. */
const CHARGED = [
  sql<string>`cast(count(*) as text)`.as('requests'),
  exactSum('-journal.balance_delta').as('amount'),
] as const;

/**
 * What an account was charged, per UTC day and model, read from the journal: one `capture`
 * entry per charged request or task (docs/usage.md). The model comes from the captured hold's
 * price version, which outlives the request record (records are purged after their retention;
 * holds, prices and the journal are not), so a year of usage stays whole. Holds, releases and
 * requests that took no hold (free models, refusals before any hold) charge nothing and do not
 * appear.
 */
export class AccountUsageReader {
  constructor(private readonly db: Kysely<Database>) {}

  async read(accountId: string, range: DayRange): Promise<AccountUsage> {
    const rows = await this.captures(accountId, range)
      .leftJoin('model_prices', 'model_prices.price_version', 'holds.price_version')
      .select([DAY_NUMBER.as('day'), MODEL.as('model'), ...CHARGED])
      .groupBy([DAY_NUMBER, MODEL])
      .execute();
    const data: UsageRow[] = rows
      .map((row) => ({
        date: dayOf(Number(row.day) * DAY_MS),
        model: row.model,
        requests: Number(row.requests),
        amount: safeAmount(row.amount),
      }))
      .sort((a, b) => compareText(a.date, b.date) || compareText(a.model, b.model));
    const byModel = new Map<string, UsageModelTotal>();
    for (const row of data) {
      const total = byModel.get(row.model) ?? { model: row.model, requests: 0, amount: 0 };
      byModel.set(row.model, {
        model: row.model,
        requests: total.requests + row.requests,
        amount: total.amount + row.amount,
      });
    }
    const models = [...byModel.values()].sort((a, b) => compareText(a.model, b.model));
    return {
      object: 'account.usage',
      account_id: accountId,
      currency: 'CNY_MICRO',
      from: range.from,
      to: range.to,
      data,
      totals: {
        requests: models.reduce((sum, model) => sum + model.requests, 0),
        amount: models.reduce((sum, model) => sum + model.amount, 0),
        by_model: models,
      },
    };
  }

  /**
   * What each key of the account was charged over `range`: the same `capture` entries as
   * `read`, attributed to the key of the request that took the hold. A request record is purged
   * after `request_retention_days`; a capture whose record is gone counts under `key_id: null`
   * (the account's total stays whole). Keys that were charged nothing are absent.
   */
  async readByKey(accountId: string, range: DayRange): Promise<KeySpend> {
    const rows = await this.captures(accountId, range)
      .leftJoin('requests', 'requests.id', 'holds.request_id')
      .select(['requests.key_id as key_id', ...CHARGED])
      .groupBy('requests.key_id')
      .execute();
    const data = rows
      .map((row) => ({
        key_id: row.key_id,
        requests: Number(row.requests),
        amount: safeAmount(row.amount),
      }))
      .sort((a, b) => compareText(a.key_id ?? '', b.key_id ?? ''));
    return { object: 'list', account_id: accountId, from: range.from, to: range.to, data };
  }

  /** The account's `capture` entries of the range, with the hold each captured. */
  private captures(accountId: string, range: DayRange) {
    return this.db
      .selectFrom('journal')
      .innerJoin('holds', 'holds.id', 'journal.hold_id')
      .where('journal.account_id', '=', accountId)
      .where('journal.kind', '=', 'capture')
      .where('journal.created_at', '>=', range.start)
      .where('journal.created_at', '<', range.end);
  }
}

/** Spend per key over a range of UTC days (the console's keys page). */
export interface KeySpend {
  object: 'list';
  account_id: string;
  from: string;
  to: string;
  data: { key_id: string | null; requests: number; amount: number }[];
}

/** Code-point order, the same whatever the locale (PostgreSQL's collation is not consulted). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
