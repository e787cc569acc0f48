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
  currency: Currency;
  /** ISO 8601. */
  created_at: string;
}
