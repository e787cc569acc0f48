import { releaseHold } from '../billing/ledger.js';
import type { ActualAmount } from '../billing/actual-amount.js';
import type { ProviderTaskInput } from '../providers/task-provider.js';
import { isNoSuchJob, UpstreamFailure } from '../providers/upstream-error.js';
import { TaskNeedsOperator, type TaskFamily } from './task-family.js';
import { submitOnChannels } from './task-channels.js';
import { deleteUndeliveredOutputs } from './task-kept-outputs.js';
import { keptResult, ResultExpired, type FinishedResult } from './task-outputs.js';
import type { LeasedTask } from './task-store.js';
import {
  LostLease,
  markUnknown,
  move,
  pollDelayMs,
  priceOf,
  WorkerKilled,
  lookupDelayMs,
  type TaskStepDeps,
} from './task-step-kit.js';
import { succeed } from './task-delivery.js';
import { keepLateAnswer } from './task-late-answer.js';
import { lookedUpNotFound } from './task-not-received.js';
import { queryWindowClosed } from './task-query-window.js';

/**
 * One step of a leased task, by where it stands; returns when it is next due (null: nothing more
 * to do until a settle or an operator). See docs/tasks.md for the states.
 *
 * - `queued`, nothing sent: build what the upstream is sent (a failure there fails the task:
 *   it certainly never left), then `submission` becomes `sending` (guarded), then the call:
 *   from `sending` on the task is never submitted again, whatever happens.
 * - `queued` but `sending` (a worker died mid-submission): `submission_unknown`.
 * - `submission_unknown`: look the submission up (read-only) where the upstream can be asked.
 * - `running`: poll; when done, store outputs, price what was delivered, finish.
 */
export async function runTaskStep(deps: TaskStepDeps, task: LeasedTask): Promise<number | null> {
  try {
    return await step(deps, task);
  } catch (error) {
    if (!(error instanceof TaskNeedsOperator)) throw error;
    return stopForOperator(deps, task, error);
  }
}

async function step(deps: TaskStepDeps, task: LeasedTask): Promise<number | null> {
  const now = deps.effects.clock.now();
  if (task.status === 'queued' && task.submission === 'pending') return submit(deps, task);
  if (task.status === 'queued')
    return markUnknown(deps, task, 'queued', 'a worker stopped mid-submission');
  if (task.status === 'submission_unknown') return lookUp(deps, task);
  if (task.status === 'running') return poll(deps, task);
  return task.status === 'succeeded' || task.status === 'failed' ? null : now;
}

/**
 * A failure that would fail the same way on every retry (a stored row that fails its schema, a
 * price version that is gone): the task stops in the operator queue (`submission_unknown`, not
 * due again) with the reason in its note, its hold kept — never priced, never charged, never
 * retried forever. A task already there (or finished) is left as it is.
 */
async function stopForOperator(
  deps: TaskStepDeps,
  task: LeasedTask,
  error: TaskNeedsOperator,
): Promise<number | null> {
  deps.logger.error(
    { taskId: task.id, upstreamTaskId: task.upstream_task_id, err: error },
    'task stopped for an operator',
  );
  deps.metrics.taskStoppedForOperator.inc();
  if (task.status !== 'queued' && task.status !== 'running') return null;
  return markUnknown(
    deps,
    task,
    task.status,
    `stopped for an operator: ${error.message}`,
    { due_at: null },
    false,
  );
}

async function submit(deps: TaskStepDeps, task: LeasedTask): Promise<number | null> {
  deps.fault('before_submit', task);
  const { family, input: stored } = deps.families.inputOf(task);
  let input: ProviderTaskInput;
  try {
    input = await family.upstreamInput(deps, task, stored);
  } catch (error) {
    // Nothing was sent (`submission` is still `pending`): the task fails and its hold goes back.
    deps.logger.warn({ taskId: task.id, err: error }, 'task input could not be built; not sent');
    return fail(
      deps,
      task,
      'queued',
      'INPUT_UNAVAILABLE',
      'the task could not be sent: its input (a reference asset) could not be read; it was never submitted and nothing was charged',
      null,
    );
  }
  const submission = await submitOnChannels(deps, task, input);
  if (submission.kind === 'unsent') return waitForChannel(deps, task);
  // From here on, the channel the call was made on: its provider, its row (task-channels.ts).
  ({ deps, task } = submission);
  if (submission.kind === 'threw') {
    const { error } = submission;
    if (error instanceof UpstreamFailure && error.certainty === 'failed')
      return fail(deps, task, 'queued', error.apiError.code, error.apiError.message, null);
    deps.logger.warn({ taskId: task.id, err: error }, 'task submission outcome unknown');
    return markUnknown(deps, task, 'queued', 'the submission was sent but its answer never came');
  }
  const { result } = submission;
  deps.fault('after_submit', task);
  try {
    if (result.kind === 'completed')
      return await succeed(deps, task, 'queued', result, {
        upstream_task_id: result.upstreamTaskId,
      });
    await move(
      deps,
      task,
      { from: 'queued', to: 'running' },
      { upstream_task_id: result.upstreamTaskId },
      { from: 'sending', to: 'accepted' },
    );
  } catch (error) {
    // A dead worker writes nothing more: the next step finds the task mid-submission.
    if (error instanceof WorkerKilled) throw error;
    // Any other failure once the upstream answered (a lost claim, a database write that failed,
    // outputs that could not be stored, a price version that is gone) takes the guarded
    // late-answer path: the job the upstream made and bills is never forgotten.
    const outcome = await keepLateAnswer(deps, task, result, error);
    // Kept or parked, the move gave the claim back: this step writes nothing more.
    if (outcome !== 'not_kept' && !(error instanceof LostLease)) throw new LostLease(task.id);
    throw error;
  }
  return deps.effects.clock.now() + pollDelayMs(0);
}

/** How long a task waits for a usable channel before it fails, never sent. */
const CHANNEL_PATIENCE_MS = 10 * 60_000;

/**
 * No channel of the task's model is usable now (all disabled, cooling down or full): the task
 * stays queued, nothing sent, and is tried again later; after `CHANNEL_PATIENCE_MS` it fails
 * with `MODEL_UNAVAILABLE` and its hold is released.
 */
function waitForChannel(deps: TaskStepDeps, task: LeasedTask): Promise<number | null> | number {
  const now = deps.effects.clock.now();
  if (now - task.created_at < CHANNEL_PATIENCE_MS) return now + pollDelayMs(task.attempts);
  return fail(
    deps,
    task,
    'queued',
    'MODEL_UNAVAILABLE',
    `no channel of ${task.model} was available for ${CHANNEL_PATIENCE_MS / 60_000} minutes; the task was never submitted and nothing was charged`,
    null,
  );
}

async function lookUp(deps: TaskStepDeps, task: LeasedTask): Promise<number | null> {
  const lookup = deps.provider.lookup;
  if (lookup === undefined) return null;
  const now = deps.effects.clock.now();
  let found: string | null;
  try {
    found = await lookup(task.id, deps.signal);
  } catch (error) {
    deps.logger.warn({ taskId: task.id, err: error }, 'task look-up failed; retrying later');
    return now + lookupDelayMs(task.attempts);
  }
  if (found === null) return lookedUpNotFound(deps, task, now + lookupDelayMs(task.attempts));
  try {
    await move(
      deps,
      task,
      { from: 'submission_unknown', to: 'running' },
      // `vanished_since` noted look-ups that answered "no such job" (task-not-received.ts).
      { upstream_task_id: found, error_message: null, vanished_since: null },
      { from: 'sending', to: 'accepted' },
    );
  } catch (error) {
    // Not recorded: the next look-up finds it again; the id is logged meanwhile.
    deps.logger.warn(
      { taskId: task.id, upstreamTaskId: found, err: error },
      'a look-up found the upstream job but it could not be recorded',
    );
    throw error;
  }
  return now;
}

async function poll(deps: TaskStepDeps, task: LeasedTask): Promise<number | null> {
  const now = deps.effects.clock.now();
  // A finished result whose outputs could not be stored yet: the download is retried from the
  // kept URLs, the upstream not asked again (a synchronous image answer cannot be).
  const kept = keptResult(deps.provider, task);
  if (kept !== null) return deliver(deps, task, kept);
  if (task.upstream_task_id === null)
    return markUnknown(deps, task, 'running', 'running without an upstream id', {}, false);
  const unreadable = queryWindowClosed(deps.provider, task, now);
  if (unreadable !== null)
    return markUnknown(deps, task, 'running', unreadable, { due_at: null }, false);
  // A stored input that fails its schema stops the task here, before any download or price.
  deps.families.inputOf(task);
  let result;
  try {
    result = await deps.provider.poll(task.upstream_task_id, deps.signal);
  } catch (error) {
    if (isNoSuchJob(error)) return vanished(deps, task, now);
    // A failed read changes nothing: the task is polled again later.
    deps.logger.warn({ taskId: task.id, err: error }, 'task poll failed; retrying later');
    return now + pollDelayMs(task.attempts);
  }
  deps.fault('mid_poll', task);
  if (task.vanished_since !== null) {
    await move(deps, task, { from: 'running', to: 'running' }, { vanished_since: null });
  }
  if (result.kind === 'pending') return now + pollDelayMs(task.attempts);
  if (result.kind === 'failed')
    return fail(deps, task, 'running', result.code, result.message, result.report);
  return deliver(deps, task, result);
}

/**
 * Stores, prices and finishes a finished result (task-delivery.ts). A result whose URL has
 * expired (`ResultExpired`) can never be delivered: the task fails with `RESULT_EXPIRED` and its
 * hold is released, as nothing was delivered (the caller never pays for a video it never got).
 */
async function deliver(
  deps: TaskStepDeps,
  task: LeasedTask,
  result: FinishedResult & { readonly text?: string | undefined },
): Promise<number | null> {
  try {
    return await succeed(deps, task, 'running', result, {});
  } catch (error) {
    if (!(error instanceof ResultExpired)) throw error;
    deps.logger.warn(
      { taskId: task.id, upstreamTaskId: task.upstream_task_id, err: error },
      'task result expired before it could be downloaded',
    );
    return fail(
      deps,
      task,
      'running',
      'RESULT_EXPIRED',
      `the upstream finished (upstream task ${task.upstream_task_id ?? ''}) but ${error.message}, before the video could be downloaded; nothing was delivered and nothing was charged`,
      null,
    );
  }
}

/**
 * The upstream answered "no such job" (it forgot or expired it). Polled again with back-off
 * while that has lasted less than `vanishedAfterMs`; then the task goes to the operator queue
 * as `submission_unknown` with its hold kept (never polled forever, never resubmitted).
 */
async function vanished(deps: TaskStepDeps, task: LeasedTask, now: number): Promise<number | null> {
  const since = task.vanished_since ?? now;
  if (task.vanished_since !== null && now - since >= deps.vanishedAfterMs)
    return markUnknown(
      deps,
      task,
      'running',
      `the upstream has answered "no such job" for ${task.upstream_task_id ?? ''} since ${new Date(since).toISOString()}`,
      { vanished_since: since, due_at: null },
      false,
    );
  if (task.vanished_since === null) {
    await move(deps, task, { from: 'running', to: 'running' }, { vanished_since: since });
  }
  deps.logger.warn({ taskId: task.id }, 'the upstream has no such job; polling again later');
  return now + pollDelayMs(task.attempts);
}

/**
 * A failed task: the hold is released, unless the upstream billed the failure, in which case
 * the task shows that amount and awaits settlement like any other (spec 2.6, 3).
 */
async function fail(
  deps: TaskStepDeps,
  task: LeasedTask,
  from: 'queued' | 'running',
  code: string,
  message: string,
  report: Parameters<TaskFamily['priceBilledFailure']>[2] | null,
): Promise<number | null> {
  let bill: ActualAmount | undefined;
  if (report?.billedFailure === true) {
    const { family, input } = deps.families.inputOf(task);
    bill = family.priceBilledFailure((await priceOf(deps, task)).prices, input, report);
  }
  const amount = Math.min(bill?.amount ?? 0, task.quoted_amount);
  const now = deps.effects.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const moved = await deps.tasks.move(
      trx,
      {
        id: task.id,
        now,
        claim: task.claim_token,
        status: { from, to: 'failed' },
        billing_state: { from: 'reserved', to: amount > 0 ? 'pending' : 'released' },
      },
      {
        error_code: code.slice(0, 100),
        error_message: message.slice(0, 1_000),
        actual_amount: amount > 0 ? amount : null,
        actual_line_items: bill === undefined ? null : JSON.stringify(bill.lineItems),
        pricing_rule: bill?.rule ?? 'failed: nothing charged, the hold is released',
        finished_at: now,
        settlement_expires_at: amount > 0 ? now + deps.settlementWindowMs : null,
      },
    );
    if (!moved) throw new LostLease(task.id);
    // Outputs an earlier step stored are never delivered by a failed task.
    await deleteUndeliveredOutputs(trx, task.id, now);
    if (amount === 0)
      await releaseHold(trx, deps.effects, {
        holdId: task.hold_id,
        reason: `task ${task.id} failed`,
      });
  });
  deps.metrics.taskTransitions.inc({ to: 'failed' });
  return null;
}
