import type {
  DashboardAccount,
  DashboardChannel,
  DashboardDay,
  DashboardFigures,
  DashboardModel,
  OperatorDashboard,
  UsageRow,
} from '@tollgate/protocol';
import { sql, type Kysely } from 'kysely';
import type { Config } from '../config/schema.js';
import { unresolvedSummary } from './unresolved-queue.js';
import { channelsOf } from '../routing/channels.js';
import type { Database } from '../store/schema.js';
import { DAY_MS, dayOf, type DayRange } from './days.js';
import { DAY_NUMBER, MODEL } from './account-usage.js';
import { exactSum, safeAmount } from '../billing/exact-sum.js';

/** How many accounts the dashboard names (the most charged of the period). */
export const TOP_ACCOUNTS = 10;

/**
 * The channel of a capture: its request record's, else its task's (a task's hold is taken by
 * its creation record, whose own channel is not set). Literal SQL, as DAY_NUMBER and MODEL:
 * PostgreSQL matches the grouped expression to the selected one by its text.
 */
const CHANNEL = sql<string | null>`coalesce(requests.channel, tasks.channel)`;

/**
 * What a group of captures brought in (the same rule as the account's usage: `-balance_delta`
 * of each `capture` entry, account-usage.ts) and what its channels charged where the record
 * has `channel_cost` (docs/routing.md, "Channel cost"); every sum exact, as text.
 */
const FIGURES = [
  sql<string>`cast(count(*) as text)`.as('requests'),
  exactSum('-journal.balance_delta').as('revenue'),
  sql<string>`cast(count(requests.channel_cost) as text)`.as('costed'),
  exactSum('requests.channel_cost').as('cost'),
  exactSum('case when requests.channel_cost is not null then -journal.balance_delta else 0 end').as(
    'costed_revenue',
  ),
] as const;

interface FigureRow {
  requests: string;
  revenue: string;
  costed: string;
  cost: string;
  costed_revenue: string;
}

/** Sums of figure rows, exact (BigInt) until shown. */
class Tally {
  private requests = 0;
  private revenue = 0n;
  private costed = 0;
  private cost = 0n;
  private costedRevenue = 0n;

  add(row: FigureRow): this {
    this.requests += Number(row.requests);
    this.revenue += BigInt(row.revenue);
    this.costed += Number(row.costed);
    this.cost += BigInt(row.cost);
    this.costedRevenue += BigInt(row.costed_revenue);
    return this;
  }

  get revenueValue(): bigint {
    return this.revenue;
  }

  figures(): DashboardFigures {
    const known = this.costed > 0;
    return {
      requests: this.requests,
      revenue: safeAmount(String(this.revenue)),
      channel_cost: known ? safeAmount(String(this.cost)) : null,
      margin: known ? safeAmount(String(this.costedRevenue - this.cost)) : null,
      revenue_without_cost: safeAmount(String(this.revenue - this.costedRevenue)),
    };
  }
}

/**
 * The operator's dashboard (docs/console.md, "Dashboard"): the period's captures from the
 * journal — every account's, through index `journal_captures_created` (migrations/040), the
 * same entries and model rule as each account's usage (account-usage.ts) — per day, model,
 * channel and account; with the money held now (the accounts' `held`, which the ledger check
 * holds equal to their open holds) and the resolution queue's totals (unresolved-queue.ts).
 * A capture's channel and cost come from its request record, which is purged after
 * `request_retention_days`: older captures count with no channel and no cost. The reads are
 * several queries, not one snapshot (a transaction long enough for a year of captures would hold
 * SQLite's one connection from every write): a capture made meanwhile may be in one and not yet
 * in another; each figure is exact as of its own read.
 */
export class OperatorDashboardReader {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly config: Pick<Config, 'models'>,
  ) {}

  async read(range: DayRange, now: number): Promise<OperatorDashboard> {
    const [groups, top, charged, held, unresolved] = await Promise.all([
      this.captures(range)
        .select([DAY_NUMBER.as('day'), MODEL.as('model'), CHANNEL.as('channel'), ...FIGURES])
        .groupBy([DAY_NUMBER, MODEL, CHANNEL])
        .execute(),
      this.captures(range)
        .select(['journal.account_id as account_id', ...FIGURES])
        .groupBy('journal.account_id')
        .orderBy(sql`sum(-journal.balance_delta)`, 'desc')
        .orderBy('journal.account_id')
        .limit(TOP_ACCOUNTS)
        .execute(),
      this.capturesOnly(range)
        .select(sql<string>`cast(count(distinct journal.account_id) as text)`.as('accounts'))
        .executeTakeFirstOrThrow(),
      this.db
        .selectFrom('accounts')
        .select([
          exactSum('held').as('amount'),
          sql<string>`cast(count(case when held > 0 then 1 end) as text)`.as('accounts'),
        ])
        .executeTakeFirstOrThrow(),
      unresolvedSummary(this.db, now),
    ]);

    const totals = new Tally();
    const days = new Map<string, Tally>();
    const models = new Map<string, Tally>();
    const channels = new Map<string | null, Tally>();
    const dayModels = new Map<string, UsageRow>();
    for (const row of groups) {
      const date = dayOf(Number(row.day) * DAY_MS);
      totals.add(row);
      tallyOf(days, date).add(row);
      tallyOf(models, row.model).add(row);
      tallyOf(channels, row.channel).add(row);
      const key = `${date} ${row.model}`;
      const before = dayModels.get(key) ?? { date, model: row.model, requests: 0, amount: 0 };
      dayModels.set(key, {
        ...before,
        requests: before.requests + Number(row.requests),
        amount: before.amount + safeAmount(row.revenue),
      });
    }
    const costConfigured = new Set(
      this.config.models
        .flatMap((model) => channelsOf(model))
        .filter((channel) => channel.cost !== null)
        .map((channel) => channel.id),
    );
    const emails = await this.emailsOf(top.map((row) => row.account_id));

    const byDay: DashboardDay[] = [...days]
      .sort(([a], [b]) => compareText(a, b))
      .map(([date, tally]) => ({ date, ...tally.figures() }));
    const byModel: DashboardModel[] = byRevenue(models).map(([model, tally]) => ({
      model,
      ...tally.figures(),
    }));
    const byChannel: DashboardChannel[] = byRevenue(channels)
      // The captures whose record names no channel last.
      .sort(([a], [b]) => Number(a === null) - Number(b === null))
      .map(([channel, tally]) => ({
        channel,
        cost_configured: channel !== null && costConfigured.has(channel),
        ...tally.figures(),
      }));
    const topAccounts: DashboardAccount[] = top.map((row) => ({
      account_id: row.account_id,
      email: emails.get(row.account_id) ?? row.account_id,
      ...new Tally().add(row).figures(),
    }));
    return {
      object: 'operator.dashboard',
      currency: 'CNY_MICRO',
      from: range.from,
      to: range.to,
      totals: totals.figures(),
      days: byDay,
      by_day_model: [...dayModels.values()].sort(
        (a, b) => compareText(a.date, b.date) || compareText(a.model, b.model),
      ),
      top_accounts: topAccounts,
      accounts_charged: Number(charged.accounts),
      models: byModel,
      channels: byChannel,
      open_holds: { amount: safeAmount(held.amount), accounts: Number(held.accounts) },
      unresolved: {
        count: unresolved.total.count,
        held: unresolved.total.held,
        oldest_created_at: unresolved.total.oldest_created_at,
      },
    };
  }

  /**
   * Every account's `capture` entries of the range: index `journal_captures_created`, whose
   * condition is this literal term (a parameter would not match a partial index).
   */
  private capturesOnly(range: DayRange) {
    return this.db
      .selectFrom('journal')
      .where('journal.kind', '=', sql.lit('capture'))
      .where('journal.created_at', '>=', range.start)
      .where('journal.created_at', '<', range.end);
  }

  /** The same, with each capture's hold, price version, record and task (by their keys). */
  private captures(range: DayRange) {
    return this.capturesOnly(range)
      .innerJoin('holds', 'holds.id', 'journal.hold_id')
      .leftJoin('model_prices', 'model_prices.price_version', 'holds.price_version')
      .leftJoin('requests', 'requests.id', 'holds.request_id')
      .leftJoin('tasks', 'tasks.request_id', 'holds.request_id');
  }

  private async emailsOf(accountIds: readonly string[]): Promise<Map<string, string>> {
    if (accountIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('accounts')
      .select(['id', 'email'])
      .where('id', 'in', accountIds)
      .execute();
    return new Map(rows.map((row) => [row.id, row.email]));
  }
}

function tallyOf<Key>(tallies: Map<Key, Tally>, key: Key): Tally {
  const found = tallies.get(key);
  if (found !== undefined) return found;
  const tally = new Tally();
  tallies.set(key, tally);
  return tally;
}

/** Highest revenue first; equal revenue by key. */
function byRevenue<Key extends string | null>(tallies: Map<Key, Tally>): [Key, Tally][] {
  return [...tallies].sort(
    ([keyA, a], [keyB, b]) =>
      (a.revenueValue < b.revenueValue ? 1 : a.revenueValue > b.revenueValue ? -1 : 0) ||
      compareText(keyA ?? '', keyB ?? ''),
  );
}

/** Code-point order, the same whatever the locale (as account-usage.ts). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
