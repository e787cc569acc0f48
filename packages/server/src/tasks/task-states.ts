import type { TaskBillingState, TaskStatus, TaskSubmission } from '../store/schema.js';

/**
 * Every move a task's status may make, listed once (docs/tasks.md has the diagram). The store's
 * `move` refuses any other: a worker, a refresh, a settle and an operator can all touch one
 * task, and none may overwrite a state it did not expect.
 *
 * - queued → running: the upstream accepted the submission and gave its id.
 * - queued → succeeded: a synchronous upstream (images) answered with the result itself.
 * - queued → failed: the submission was certainly refused or never sent (hold released).
 * - queued → submission_unknown: a submission may have reached the upstream, unconfirmed.
 * - submission_unknown → running: a look-up found the submission, a late answer gave its id,
 *   or an operator attached it; it goes on (polled, delivered).
 * - submission_unknown → failed: an operator released it, or its look-up kept answering "no
 *   such job" for a submission never accepted (task-not-received.ts: hold released).
 * - running → succeeded / failed: the upstream finished (outputs stored and priced, or not).
 * - running → submission_unknown: the upstream kept answering "no such job" (it forgot or
 *   expired the job): the hold is kept and an operator resolves it.
 * - queued / running → failed: an operator released an unfinished task.
 */
export const TASK_MOVES: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  queued: ['running', 'succeeded', 'failed', 'submission_unknown'],
  submission_unknown: ['running', 'failed'],
  running: ['succeeded', 'failed', 'submission_unknown'],
  succeeded: [],
  failed: [],
};

/**
 * Every move of `submission` (whether the upstream may have the task):
 * - pending → sending: about to call the upstream (the input is built); never sent again.
 * - sending → accepted: the upstream's id is known (its answer, a look-up, a late answer, or an
 *   operator's attach).
 */
export const SUBMISSION_MOVES: Readonly<Record<TaskSubmission, readonly TaskSubmission[]>> = {
  pending: ['sending'],
  sending: ['accepted'],
  accepted: [],
};

/**
 * Every move of `billing_state` (the hold's fate, mirrored by the ledger):
 * - reserved → pending: priced (delivered, or a failure the upstream billed): awaits settlement.
 * - reserved → released: nothing to charge (failed, nothing delivered, released by an operator).
 * - pending → settled: the caller settled it (the hold captured).
 * - pending → expired: not settled within the settlement window (task-expiry.ts): nothing
 *   charged, the hold released, the outputs deleted.
 */
export const BILLING_MOVES: Readonly<Record<TaskBillingState, readonly TaskBillingState[]>> = {
  reserved: ['pending', 'released'],
  pending: ['settled', 'expired'],
  settled: [],
  released: [],
  expired: [],
};

/** The three state columns of a task, each with its table above. */
export const STATE_TABLES = {
  status: TASK_MOVES,
  submission: SUBMISSION_MOVES,
  billing_state: BILLING_MOVES,
} as const;

export type StateColumn = keyof typeof STATE_TABLES;

/** Whether `column` may move from `from` to `to` (staying put is a guard, not a move). */
export function canMoveColumn<Column extends StateColumn>(
  column: Column,
  from: keyof (typeof STATE_TABLES)[Column],
  to: keyof (typeof STATE_TABLES)[Column],
): boolean {
  if (from === to) return true;
  const table = STATE_TABLES[column] as Readonly<Record<string, readonly string[]>>;
  return table[from as string]?.includes(to as string) ?? false;
}

export function canMove(from: TaskStatus, to: TaskStatus): boolean {
  return TASK_MOVES[from].includes(to);
}
