import type { TaskStatus } from '../store/schema.js';

/**
 * Every move a task's status may make, listed once (docs/tasks.md has the diagram). The store's
 * `transition` refuses any other: a worker, a refresh, a settle and an operator can all touch one
 * task, and none may overwrite a state it did not expect.
 *
 * - queued → running: the upstream accepted the submission and gave its id.
 * - queued → succeeded: a synchronous upstream (images) answered with the result itself.
 * - queued → failed: the submission was certainly refused or never sent (hold released).
 * - queued → submission_unknown: a submission may have reached the upstream, unconfirmed.
 * - submission_unknown → running: a look-up found the submission; it goes on.
 * - submission_unknown → failed / succeeded: an operator resolved it.
 * - running → succeeded / failed: the upstream finished (outputs stored and priced, or not).
 * - running → submission_unknown: the upstream kept answering "no such job" (it forgot or
 *   expired the job): the hold is kept and an operator resolves it.
 * - queued / running → failed: an operator released an unfinished task.
 */
export const TASK_MOVES: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  queued: ['running', 'succeeded', 'failed', 'submission_unknown'],
  submission_unknown: ['running', 'succeeded', 'failed'],
  running: ['succeeded', 'failed', 'submission_unknown'],
  succeeded: [],
  failed: [],
};

export function canMove(from: TaskStatus, to: TaskStatus): boolean {
  return TASK_MOVES[from].includes(to);
}

/** States in which the task may still need its referenced assets and its hold. */
export const UNFINISHED_TASK_STATES: readonly TaskStatus[] = [
  'queued',
  'running',
  'submission_unknown',
];
