import { releaseHold } from '../billing/ledger.js';
import { recordStoredOutputs } from './task-kept-outputs.js';
import { keptSources, ResultExpired, storeOutputs, type FinishedResult } from './task-outputs.js';
import type { LeasedTask, TaskChanges } from './task-store.js';
import {
  LostLease,
  markUnknown,
  MAX_DOWNLOAD_TRIES,
  move,
  pollDelayMs,
  priceOf,
  type TaskStepDeps,
  WorkerKilled,
} from './task-step-kit.js';

/*
 * The delivery of a finished task (task-steps.ts runs the steps): its outputs stored, what was
 * delivered priced, and the task finished in one transaction — or, when its outputs cannot be
 * stored, the download retried and at last handed to an operator.
 */

/** Stores the outputs, prices what was delivered and finishes the task, in one transaction. */
export async function succeed(
  deps: TaskStepDeps,
  task: LeasedTask,
  from: 'queued' | 'running',
  result: FinishedResult & { readonly text?: string | undefined },
  extra: TaskChanges,
): Promise<number | null> {
  // The input and the price first: a bad row or a missing price version must not cost a
  // download (it stops the task for an operator before anything is stored).
  const { family, input } = deps.families.inputOf(task);
  const price = await priceOf(deps, task);
  let stored;
  try {
    stored = await storeOutputs(deps, family, task, result);
  } catch (error) {
    if (error instanceof WorkerKilled) throw error;
    // An expired result is no download to retry: the step runner fails the task (task-steps.ts).
    if (error instanceof ResultExpired && from === 'running') throw error;
    return downloadFailed(deps, task, from, result, extra, error);
  }
  // Remembered before anything else can fail: a later step finishes with these outputs.
  if (
    stored.fresh &&
    !(await recordStoredOutputs(deps, task, from, stored.assets, deps.effects.clock.now()))
  )
    throw new LostLease(task.id);
  const bill = family.priceDelivery(price.prices, input, stored.report);
  const outputs = result.text === undefined ? stored.outputs : [{ text: result.text }];
  const amount = Math.min(bill.amount, task.quoted_amount);
  const now = deps.effects.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const moved = await deps.tasks.move(
      trx,
      {
        id: task.id,
        now,
        claim: task.claim_token,
        status: { from, to: 'succeeded' },
        // A synchronous answer (from queued) is also the submission's acceptance.
        ...(from === 'queued' ? { submission: { from: 'sending', to: 'accepted' } as const } : {}),
        billing_state: { from: 'reserved', to: amount > 0 ? 'pending' : 'released' },
      },
      {
        ...extra,
        outputs: JSON.stringify(outputs),
        result_sources: null,
        actual_amount: amount > 0 ? amount : null,
        actual_line_items: JSON.stringify(bill.lineItems),
        pricing_rule: bill.rule,
        finished_at: now,
        settlement_expires_at: amount > 0 ? now + deps.settlementWindowMs : null,
      },
    );
    if (!moved) throw new LostLease(task.id);
    if (amount === 0)
      await releaseHold(trx, deps.effects, {
        holdId: task.hold_id,
        reason: `nothing delivered by task ${task.id}`,
      });
  });
  deps.metrics.taskTransitions.inc({ to: 'succeeded' });
  return null;
}

/**
 * The upstream finished but its outputs could not be stored (a result URL the guarded fetch
 * refuses, a download that keeps breaking, bytes that are not what was asked). The result's
 * URLs and report are kept on the task (`result_sources`), so the download is retried from them
 * without asking the upstream again; a synchronous answer (from `queued`) is accepted and runs
 * on. Tried again with back-off up to `MAX_DOWNLOAD_TRIES` times in a row; then, the same for
 * every family, the task goes to the operator queue as `submission_unknown` with its hold, the
 * upstream's id and the kept URLs, and the last failure in its note — never `running` for good.
 * A synchronous answer with no URL to keep (base64 bytes) is thrown on to the submission's
 * late-answer path (task-late-answer.ts), which stores the bytes once more or, failing that,
 * parks the task for an operator with its upstream id.
 */
export async function downloadFailed(
  deps: TaskStepDeps,
  leased: LeasedTask,
  from: 'queued' | 'running',
  result: FinishedResult,
  extra: TaskChanges,
  error: unknown,
): Promise<number | null> {
  const sources = leased.result_sources ?? keptSources(result);
  if (from === 'queued' && sources === null) throw error;
  let task = leased;
  if (from === 'queued') {
    await move(
      deps,
      task,
      { from: 'queued', to: 'running' },
      { ...extra, result_sources: sources },
      { from: 'sending', to: 'accepted' },
    );
    const upstreamTaskId = extra.upstream_task_id;
    task = {
      ...task,
      status: 'running',
      submission: 'accepted',
      upstream_task_id: typeof upstreamTaskId === 'string' ? upstreamTaskId : task.upstream_task_id,
    };
  }
  const now = deps.effects.clock.now();
  const failures = task.download_failures + 1;
  const why = (error instanceof Error ? error.message : String(error)).slice(0, 300);
  deps.logger.warn({ taskId: task.id, err: error, failures }, 'task outputs could not be stored');
  if (failures >= MAX_DOWNLOAD_TRIES)
    return markUnknown(
      deps,
      task,
      'running',
      `the upstream finished (upstream task ${task.upstream_task_id ?? ''}) but its outputs could not be stored after ${failures} tries: ${why}`,
      { download_failures: failures, result_sources: sources, due_at: null },
      false,
    );
  await move(
    deps,
    task,
    { from: 'running', to: 'running' },
    { download_failures: failures, result_sources: sources },
  );
  return now + pollDelayMs(task.attempts);
}
