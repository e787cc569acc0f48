import type { Budget } from '@tollgate/protocol';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../store/schema.js';
import type { Clock } from '../util/effects.js';
import { DEFAULT_BUDGET_TIME_ZONE } from '../config/time-zone.js';
import {
  currentWindowStart,
  windowResetsAt,
  windowStarts,
  type BudgetWindow,
} from './budget-windows.js';

/**
 * The SQL side of budgets, used by the ledger's guarded updates (billing/ledger.ts). A budget
 * row (account or key) keeps `budget_spent` for the window starting at `budget_window_start`;
 * each statement is given the current start of every window kind and picks its row's own, so a
 * row whose stored start is older counts as having spent nothing in the current window.
 */
export interface WindowSlots {
  daily: number;
  weekly: number;
  monthly: number;
}

/** The current start of the row's own window (0 for `total` and for rows without a budget). */
export function budgetWindowStartSql(slot: WindowSlots): RawBuilder<number> {
  // Casts: PostgreSQL would otherwise type the parameters of a CASE as text.
  return sql<number>`(case budget_window when 'daily' then cast(${slot.daily} as bigint) when 'weekly' then cast(${slot.weekly} as bigint) when 'monthly' then cast(${slot.monthly} as bigint) else 0 end)`;
}

/** The row's spend in its current window. */
export function spentInWindowSql(slot: WindowSlots): RawBuilder<number> {
  return sql<number>`(case when budget_window_start = ${budgetWindowStartSql(slot)} then budget_spent else 0 end)`;
}

export function windowStartsOf(effects: {
  readonly clock: Clock;
  readonly budgetTimeZone?: string;
}): WindowSlots {
  return windowStarts(effects.clock.now(), effects.budgetTimeZone ?? DEFAULT_BUDGET_TIME_ZONE);
}

/** Which budget refused a hold, for the caller's error message. */
export interface BudgetRefusal {
  readonly scope: 'account' | 'key';
  readonly limit: number;
  readonly window: BudgetWindow;
  /** What the budget still allowed when the hold was refused, micro-yuan (never negative). */
  readonly remaining: number;
  /** When the window turns over (epoch ms), or null for `total`. */
  readonly resetsAt: number | null;
}

/**
 * The columns an account's admission is judged on (its money and its budget): read by the single
 * claim's refusal and by the batched claims' locked rows (requests/batched-accounts.ts) alike.
 */
export const ACCOUNT_MONEY_COLUMNS = [
  'balance',
  'held',
  'budget_limit',
  'budget_window',
  'budget_window_start',
  'budget_spent',
] as const;

/** The budget columns of an account or key row, as the store returns them. */
export interface BudgetColumns {
  budget_limit: number | null;
  budget_window: BudgetWindow | null;
  budget_window_start: number;
  budget_spent: number;
}

export interface BudgetState {
  readonly limit: number;
  readonly window: BudgetWindow;
  /** Captured in the current window, micro-yuan. */
  readonly spent: number;
  /** Reserved by open holds counted against the budget, micro-yuan. */
  readonly held: number;
  /** `limit - spent - held`, never below 0. */
  readonly remaining: number;
  readonly resetsAt: number | null;
}

/** A row's budget as of `now`, or null when it has none. `held`: the row's open holds. */
export function budgetStateOf(
  row: BudgetColumns,
  held: number,
  now: number,
  zone: string,
): BudgetState | null {
  if (row.budget_limit === null || row.budget_window === null) return null;
  const start = currentWindowStart(row.budget_window, windowStarts(now, zone));
  const spent = row.budget_window_start === start ? row.budget_spent : 0;
  return {
    limit: row.budget_limit,
    window: row.budget_window,
    spent,
    held,
    remaining: Math.max(0, row.budget_limit - spent - held),
    resetsAt: windowResetsAt(row.budget_window, now, zone),
  };
}

/**
 * Why a hold's guarded update changed nothing, read after the fact (the refusal path only; the
 * transaction is rolled back by the caller). For an account, a short balance comes first.
 */
export async function refusalOf(
  trx: Kysely<Database>,
  effects: { readonly clock: Clock; readonly budgetTimeZone?: string },
  input: { scope: 'account' | 'key'; id: string; amount: number },
): Promise<{ kind: 'insufficient_funds' } | ({ kind: 'over_budget' } & BudgetRefusal)> {
  if (input.scope === 'account') {
    const row = await trx
      .selectFrom('accounts')
      .select(ACCOUNT_MONEY_COLUMNS)
      .where('id', '=', input.id)
      .executeTakeFirst();
    if (row === undefined) return { kind: 'insufficient_funds' };
    return accountRefusalOf(row, input.amount, effects);
  }
  const zone = effects.budgetTimeZone ?? DEFAULT_BUDGET_TIME_ZONE;
  const row = await trx
    .selectFrom('api_keys')
    .select(['budget_held', 'budget_limit', 'budget_window', 'budget_window_start', 'budget_spent'])
    .where('id', '=', input.id)
    .executeTakeFirst();
  return overBudgetOf(
    row === undefined ? null : budgetStateOf(row, row.budget_held, effects.clock.now(), zone),
    'key',
  );
}

/**
 * Why an account row (as read, or as a batch would leave it: requests/batched-admission.ts)
 * refuses a hold of `amount`: a short balance comes first, then its budget.
 */
export function accountRefusalOf(
  row: BudgetColumns & { balance: number; held: number },
  amount: number,
  effects: { readonly clock: Clock; readonly budgetTimeZone?: string },
): { kind: 'insufficient_funds' } | ({ kind: 'over_budget' } & BudgetRefusal) {
  if (row.balance - row.held < amount) return { kind: 'insufficient_funds' };
  const zone = effects.budgetTimeZone ?? DEFAULT_BUDGET_TIME_ZONE;
  return overBudgetOf(budgetStateOf(row, row.held, effects.clock.now(), zone), 'account');
}

function overBudgetOf(
  state: BudgetState | null,
  scope: 'account' | 'key',
): { kind: 'insufficient_funds' } | ({ kind: 'over_budget' } & BudgetRefusal) {
  // Moved between the update and this read (a concurrent change): report it as a short balance.
  if (state === null) return { kind: 'insufficient_funds' };
  return {
    kind: 'over_budget',
    scope,
    limit: state.limit,
    window: state.window,
    remaining: state.remaining,
    resetsAt: state.resetsAt,
  };
}

/** The wire form of a budget (packages/protocol `Budget`). */
export function budgetView(state: BudgetState | null): Budget | null {
  if (state === null) return null;
  return {
    limit: state.limit,
    window: state.window,
    spent: state.spent,
    held: state.held,
    remaining: state.remaining,
    resets_at: state.resetsAt === null ? null : new Date(state.resetsAt).toISOString(),
  };
}
