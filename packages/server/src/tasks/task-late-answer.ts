import type { SubmitResult } from '../providers/task-provider.js';
import type { TaskChanges, TaskRow } from './task-store.js';
import { keptSources } from './task-outputs.js';
import type { TaskStepDeps } from './task-steps.js';

/**
 * The upstream answered after this claim was lost (the step outlived its lease): the accepted
 * work is not thrown away. One guarded move to `running` (only where no upstream id is
 * recorded) keeps what the next step needs to finish it — the upstream's id for a task to poll,
 * or, for a synchronous answer (images), the result's URLs and report (`result_sources`), which
 * the next step downloads from without asking the upstream again. It is logged and counted.
 *
 * The task is either `submission_unknown` (another worker found it mid-submission and marked
 * it) or still `queued` + `sending` under the other worker's claim, whose step has not written
 * yet: that step's fenced move then finds the task changed and changes nothing. Not kept: a task
 * that moved on (a look-up, an operator), or a synchronous answer with nothing to open again
 * (bytes in the answer): it waits for an operator as `submission_unknown`. Polling a synchronous
 * answer's id would fail for good, so such an answer never runs on by its id alone.
 */
export async function keepLateAnswer(
  deps: TaskStepDeps,
  task: TaskRow,
  result: SubmitResult,
): Promise<void> {
  const now = deps.effects.clock.now();
  const upstreamTaskId = result.upstreamTaskId;
  const keptResult = result.kind === 'completed' ? keptSources(result) : null;
  const keepable = result.kind === 'completed' ? keptResult !== null : upstreamTaskId !== null;
  const changes: TaskChanges = {
    upstream_task_id: upstreamTaskId,
    ...(keptResult === null ? {} : { result_sources: keptResult }),
    error_message: null,
    due_at: now,
    lease_owner: null,
    lease_until: null,
    claim_token: null,
  };
  const keep = (from: 'submission_unknown' | 'queued') =>
    deps.tasks.move(
      deps.db,
      {
        id: task.id,
        now,
        status: { from, to: 'running' },
        submission: { from: 'sending', to: 'accepted' },
        noUpstreamId: true,
      },
      changes,
    );
  const kept = keepable && ((await keep('submission_unknown')) || (await keep('queued')));
  deps.metrics.taskLateAnswers.inc({ outcome: kept ? 'kept' : 'not_kept' });
  deps.logger.warn(
    { taskId: task.id, upstreamTaskId, kept },
    kept
      ? 'an upstream answer came after the claim was lost; it is kept and the task runs on'
      : 'an upstream answer came after the claim was lost; the task had moved on (or the answer cannot be kept), nothing changed',
  );
}
