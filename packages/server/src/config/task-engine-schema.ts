import { z } from 'zod';

const positiveInt = z.number().int().positive();

/** How long a priced task awaits settlement by default: 7 days. */
export const DEFAULT_SETTLEMENT_WINDOW_MS = 7 * 86_400_000;

/**
 * The task engine of one instance (docs/tasks.md "The worker"): how much it runs at once, how
 * long its claims last, and the bound after which a task stops waiting and goes to an operator.
 */
export const taskEngineSchema = z
  .object({
    /** Task steps this instance runs at once (submissions, polls, downloads). */
    worker_concurrency: positiveInt.default(16),
    /**
     * Most of those steps one account may have at once (default: a quarter of
     * `worker_concurrency`, at least 1): one account's slow or hanging calls never hold another
     * account's tasks back.
     */
    worker_concurrency_per_account: positiveInt.optional(),
    /** How long a claim lasts unless renewed (it is renewed while a step is in flight). */
    lease_ms: positiveInt.min(1_000).default(60_000),
    /**
     * How long polls may keep answering "no such job" before the task goes to the operator
     * queue as `submission_unknown` (hold kept).
     */
    vanished_after_ms: positiveInt.default(600_000),
    /**
     * How long a priced task awaits settlement (from when it was priced) before it expires:
     * nothing charged, the hold released, its outputs deleted (docs/tasks.md "Settlement
     * window"). Shown on the task as `settlement.expires_at`.
     */
    settlement_window_ms: positiveInt.default(DEFAULT_SETTLEMENT_WINDOW_MS),
  })
  .strict();

export type TaskEngineConfig = z.output<typeof taskEngineSchema>;

/** The per-account share of the worker's steps (the configured one, or a quarter, at least 1). */
export function perAccountConcurrency(config: TaskEngineConfig): number {
  return Math.min(
    config.worker_concurrency,
    config.worker_concurrency_per_account ?? Math.max(1, Math.floor(config.worker_concurrency / 4)),
  );
}
