import type { Currency, MicroYuan } from './money.js';

/**
 * An account's money (`GET /v1/account`, `POST /v1/redemptions`; the admin API's account
 * answers, where a top-up adds `replayed`). Amounts are micro-yuan safe integers, never above
 * `MAX_BALANCE_MICRO_YUAN`.
 */
export interface Account {
  object: 'account';
  /** `acct_…`. */
  id: string;
  /** Lower-cased at creation; unique. */
  email: string;
  /** Everything credited minus everything captured, micro-yuan; never negative. */
  balance: MicroYuan;
  /** The part of `balance` reserved by open holds (requests in flight, tasks), micro-yuan. */
  held: MicroYuan;
  /** `balance - held`: what a new request or task may reserve, micro-yuan. */
  available: MicroYuan;
  /**
   * Refunded micro-yuan not yet taken back, because it was spent or held when the refund came
   * (docs/payments.md "Refunds"): the next money that becomes available (a released hold, the
   * unused part of a charge, a top-up) pays it first, so while it is above 0 `available` is 0.
   */
  owed: MicroYuan;
  currency: Currency;
  /** ISO 8601. */
  created_at: string;
  /** The account's spend limit, or `null` when it has none (docs/billing.md "Budgets"). */
  budget: Budget | null;
}

/**
 * `GET /v1/account`: the account, and the budget of the key that asked (docs/billing.md,
 * "Budgets"). A request must fit both: the account's `budget` covers every key of the account,
 * `key_budget` this key alone.
 */
export interface CallerAccount extends Account {
  /** The calling key's own spend limit, or `null` when it has none. */
  key_budget: Budget | null;
}

/** A window a budget counts spend over; `total` never resets. */
export type BudgetWindow = 'daily' | 'weekly' | 'monthly' | 'total';

/**
 * A spend limit of an account or a key over a window whose boundaries are local midnight in the
 * server's configured time zone (weeks start on Monday). A request is refused when its hold
 * would take `spent + held` past `limit`.
 */
export interface Budget {
  /** Micro-yuan. */
  limit: MicroYuan;
  window: BudgetWindow;
  /** Captured in the current window, micro-yuan. */
  spent: MicroYuan;
  /** Reserved by open holds counted against this budget, micro-yuan. */
  held: MicroYuan;
  /** `limit - spent - held`, never below 0: the largest hold the budget still admits. */
  remaining: MicroYuan;
  /** ISO 8601: when the current window ends and `spent` starts again from 0; `null` for `total`. */
  resets_at: string | null;
}
