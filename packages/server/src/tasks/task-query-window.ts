import type { TaskProvider } from '../providers/task-provider.js';
import type { TaskRow } from './task-store.js';

/**
 * Whether a running task was submitted longer ago than its upstream answers polls
 * (`TaskProvider.queryRetentionMs`; Volcengine Ark: 7 days). Past it a poll cannot say what
 * became of the task, so it is not polled again: the step runner (task-steps.ts) hands it to the
 * operator queue with this note, its hold kept (docs/h3-upstream.md, "Ark's windows"). Counted
 * from our submission, which is never later than the upstream's own creation of the task: the
 * window is closed no later than the upstream's. Null while the window is open, or without a
 * limit.
 */
export function queryWindowClosed(
  provider: Pick<TaskProvider, 'queryRetentionMs'>,
  task: Pick<TaskRow, 'submitted_at' | 'created_at' | 'upstream_task_id'>,
  now: number,
): string | null {
  const retention = provider.queryRetentionMs;
  const submittedAt = task.submitted_at ?? task.created_at;
  if (retention === undefined || now - submittedAt < retention) return null;
  return `the upstream answers reads of a task for ${spanOf(retention)} after its submission; upstream task ${task.upstream_task_id ?? ''}, submitted at ${new Date(submittedAt).toISOString()}, can no longer be read`;
}

/** A span of time in words: whole days as days, else hours. */
const spanOf = (ms: number) =>
  ms % 86_400_000 === 0 ? `${ms / 86_400_000} days` : `${ms / 3_600_000} hours`;
