import type { Kysely } from 'kysely';
import type { SubmitResult } from '../providers/task-provider.js';
import type { AssetTable, Database } from '../store/schema.js';
import { deleteUndeliveredOutputs } from './task-kept-outputs.js';
import { keptSources, storedSources, storeOutputs, type FinishedResult } from './task-outputs.js';
import type { TaskChanges, TaskRow } from './task-store.js';
import { WorkerKilled, type TaskStepDeps } from './task-step-kit.js';

/** What became of an answer that reached this path: see `keepLateAnswer`. */
export type LateAnswerOutcome = 'kept' | 'parked' | 'not_kept';

/**
 * The upstream answered a submission, and the step could not record it: its claim was lost
 * (the step outlived its lease), or any other error came after the answer (a database write
 * that failed, outputs that could not be stored, a price version that is gone). The accepted
 * work is never forgotten: the upstream made, and bills, that job. One guarded move to
 * `running` (only where no upstream id is recorded and `submission` is still `sending`) keeps
 * what the next step needs to finish it:
 *
 * - an accepted job: its upstream id, to poll;
 * - a synchronous answer (images) with URLs: the result's URLs and report (`result_sources`),
 *   downloaded from by the next step without asking the upstream again;
 * - a synchronous answer of bytes (`b64_json`): the bytes, placed in storage before the move and
 *   recorded as the task's undelivered outputs in the move's own transaction, with the report
 *   (`result_sources` `{stored, report}`): the next step finishes from them. Polling a
 *   synchronous answer's id would fail for good, so such an answer never runs on by its id alone.
 *
 * The task is either `submission_unknown` (another worker found it mid-submission and marked
 * it), or `queued` + `sending`: under this step's own claim (an error other than a lost claim),
 * or under another worker's claim whose step has not written yet, whose fenced move then finds
 * the task changed and changes nothing. The move clears the claim, so the task is claimed again
 * at once. An answer that cannot be kept (bytes that cannot be stored) is parked: the task goes
 * to the operator queue as `submission_unknown` with its upstream id recorded and nothing due.
 * A task that moved on (a look-up, an operator) is left as it is. Every outcome is logged with
 * the upstream's id (the only trace of the job when nothing could be written) and counted.
 */
export async function keepLateAnswer(
  deps: TaskStepDeps,
  task: TaskRow,
  result: SubmitResult,
  why: unknown,
): Promise<LateAnswerOutcome> {
  const upstreamTaskId = result.upstreamTaskId;
  const context = { taskId: task.id, upstreamTaskId, why: describe(why) };
  let outcome: LateAnswerOutcome = 'not_kept';
  try {
    const kept = await keptAnswer(deps, task, result);
    if (kept === null) {
      if (await parkAnswer(deps, task, upstreamTaskId)) outcome = 'parked';
    } else if (await recordAnswer(deps, task, kept)) outcome = 'kept';
  } catch (error) {
    if (error instanceof WorkerKilled) throw error;
    deps.logger.error(
      { ...context, err: error },
      'an upstream answer could not be recorded; the upstream job is named only here',
    );
  }
  deps.metrics.taskLateAnswers.inc({ outcome });
  const message = {
    kept: 'an upstream answer could not be recorded by its step; it is kept and the task runs on',
    parked:
      'an upstream answer could not be recorded or kept; the task waits for an operator with its upstream id',
    not_kept:
      'an upstream answer could not be recorded by its step; the task had moved on (or the answer could not be written), nothing changed',
  }[outcome];
  if (outcome === 'kept') deps.logger.warn(context, message);
  else deps.logger.error(context, message);
  return outcome;
}

/** What a kept answer writes: its changes and the output rows to insert (bytes already placed). */
interface KeptAnswer {
  readonly changes: TaskChanges;
  readonly assets: readonly AssetTable[] | null;
}

/**
 * What of the answer can be kept; null when nothing can (bytes that cannot be stored). Bytes
 * are placed here, before the guarded move; bytes a failed move leaves behind belong to no
 * asset and are reclaimed by the sweeper. Outputs the step already recorded are reused.
 */
async function keptAnswer(
  deps: TaskStepDeps,
  task: TaskRow,
  result: SubmitResult,
): Promise<KeptAnswer | null> {
  if (result.kind === 'accepted')
    return { changes: { upstream_task_id: result.upstreamTaskId }, assets: null };
  const urls = keptSources(result);
  const base = { upstream_task_id: result.upstreamTaskId };
  if (urls !== null) return { changes: { ...base, result_sources: urls }, assets: null };
  const stored = await placeBytes(deps, task, result);
  if (stored === null) return null;
  return {
    changes: { ...base, result_sources: storedSources(result) },
    assets: stored.fresh ? stored.assets : null,
  };
}

/** Stores a synchronous answer's outputs (bytes in the answer); null when they cannot be. */
async function placeBytes(
  deps: TaskStepDeps,
  task: TaskRow,
  result: FinishedResult & { readonly upstreamTaskId: string | null },
) {
  try {
    return await storeOutputs(deps, deps.families.of(task.kind), task, result);
  } catch (error) {
    if (error instanceof WorkerKilled) throw error;
    deps.logger.warn(
      { taskId: task.id, upstreamTaskId: result.upstreamTaskId, err: error },
      "an upstream answer's bytes could not be stored",
    );
    return null;
  }
}

/** The lease columns cleared by the moves below: the task is claimed again at once. */
const released = { lease_owner: null, lease_until: null, claim_token: null } as const;

/** The guarded move to `running` that keeps the answer, with its outputs; whether it was made. */
async function recordAnswer(deps: TaskStepDeps, task: TaskRow, kept: KeptAnswer): Promise<boolean> {
  const now = deps.effects.clock.now();
  // `vanished_since` may note look-ups that answered "no such job" (task-not-received.ts): the
  // task runs on with an answer now, and a poll's own count starts afresh.
  const changes: TaskChanges = {
    ...kept.changes,
    error_message: null,
    vanished_since: null,
    due_at: now,
    ...released,
  };
  return deps.db.transaction().execute(async (trx) => {
    const keep = (from: 'submission_unknown' | 'queued') =>
      acceptedMove(trx, deps, task, from, 'running', changes);
    const moved = (await keep('submission_unknown')) || (await keep('queued'));
    if (!moved || kept.assets === null) return moved;
    await deleteUndeliveredOutputs(trx, task.id, now);
    if (kept.assets.length > 0)
      await trx
        .insertInto('assets')
        .values([...kept.assets])
        .execute();
    return true;
  });
}

/**
 * An answer that cannot be kept: where the task still waits unanswered, it goes to the operator
 * queue with the upstream id recorded and nothing due (never looked up or resubmitted).
 */
async function parkAnswer(
  deps: TaskStepDeps,
  task: TaskRow,
  upstreamTaskId: string | null,
): Promise<boolean> {
  const changes: TaskChanges = {
    upstream_task_id: upstreamTaskId,
    error_message: `the upstream answered (upstream id ${upstreamTaskId ?? 'not given'}) but its result could not be stored; the task keeps its hold and is resolved by an operator`,
    due_at: null,
    ...released,
  };
  const park = (from: 'submission_unknown' | 'queued') =>
    acceptedMove(deps.db, deps, task, from, 'submission_unknown', changes);
  return (await park('submission_unknown')) || (await park('queued'));
}

/** `from` → `to` with `submission` `sending` → `accepted`, where no upstream id is recorded. */
function acceptedMove(
  executor: Kysely<Database>,
  deps: TaskStepDeps,
  task: TaskRow,
  from: 'submission_unknown' | 'queued',
  to: 'running' | 'submission_unknown',
  changes: TaskChanges,
): Promise<boolean> {
  return deps.tasks.move(
    executor,
    {
      id: task.id,
      now: deps.effects.clock.now(),
      status: { from, to },
      submission: { from: 'sending', to: 'accepted' },
      noUpstreamId: true,
    },
    changes,
  );
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));
