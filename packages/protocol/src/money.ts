/** RMB micro-yuan: 1 000 000 = 1 yuan. Every amount on the wire is a safe integer of this unit. */
export const CURRENCY = 'CNY_MICRO';
export const MICRO_YUAN_PER_YUAN = 1_000_000;

/**
 * The most one movement may add: one top-up, one redemption code, one operator capture
 * (10^13 micro-yuan = 10 million yuan). Enforced by the services and by database constraints.
 */
export const MAX_MOVEMENT_MICRO_YUAN = 10_000_000_000_000;

/**
 * The most an account's `balance` (and so its `held`, never above the balance) may reach
 * (10^15 micro-yuan = 1 billion yuan). With it every stored amount and every per-account sum
 * stays far below 2^53 (about 9.007 × 10^15), where JavaScript numbers and SQLite's mixed
 * integer/real arithmetic stop being exact; docs/billing.md, "Bounds".
 */
export const MAX_BALANCE_MICRO_YUAN = 1_000_000_000_000_000;

/** The one currency on the wire: integer RMB micro-yuan. */
export type Currency = typeof CURRENCY;

/**
 * An amount of money on the wire: a safe integer of RMB micro-yuan (1 000 000 = 1 yuan), never
 * a float. A name for `number` that says the unit.
 */
export type MicroYuan = number;
