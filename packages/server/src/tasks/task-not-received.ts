import { releaseHold } from '../billing/ledger.js';
import { TaskNeedsOperator } from './task-family.js';
import { deleteUndeliveredOutputs } from './task-kept-outputs.js';
import { LostLease, move, type TaskStepDeps } from './task-step-kit.js';
import type { LeasedTask } from './task-store.js';

/**
 * The look-up of a `submission_unknown` task whose answer never came (`submission: sending`)
 * answered "no such job". The first such answer is noted (`vanished_since`, which for a task
 * never accepted says when look-ups began answering so); once the look-up has kept answering
 * so for the upstream's `not_received_after_ms` since then, the upstream never received it: the
 * task fails and its hold is released (`failTaskNeverReceived`). Until then it is looked up
 * again at `retryAt`.
 *
 * Why that window is enough: the first answer came after the task became `submission_unknown`,
 * and no send of it starts after that (the claim that wrote `sending` had lost its lease or
 * gave up the call). A send started before has reached the upstream, and shows in its look-up,
 * or was given up within the upstream's timeouts, which the window exceeds (config/schema.ts).
 * A look-up that fails (anything but "no such job") never comes here: it neither starts nor
 * ends the window. A task the upstream accepted (its id known) is never judged so: an upstream
 * that forgot an accepted job is the operator's (docs/tasks.md, "Vanished jobs").
 */
export async function lookedUpNotFound(
  deps: TaskStepDeps,
  task: LeasedTask,
  retryAt: number,
): Promise<number | null> {
  if (task.submission !== 'sending') return retryAt;
  const now = deps.effects.clock.now();
  const since = task.vanished_since;
  if (since === null) {
    await move(
      deps,
      task,
      { from: 'submission_unknown', to: 'submission_unknown' },
      { vanished_since: now },
      { from: 'sending', to: 'sending' },
    );
    return retryAt;
  }
  if (now - since < deps.notReceivedAfterMs(task.upstream)) return retryAt;
  await failTaskNeverReceived(deps, task, since, now);
  return null;
}

/**
 * One guarded transition: `submission_unknown` + `sending` + `reserved` → `failed` + `released`
 * (fenced by the claim), and the hold released with its journal line, or nothing at all. An
 * operator who resolved the task meanwhile (or another worker) makes the move fail: nothing
 * changes (`LostLease`).
 */
async function failTaskNeverReceived(
  deps: TaskStepDeps,
  task: LeasedTask,
  since: number,
  now: number,
): Promise<void> {
  const sinceText = new Date(since).toISOString();
  await deps.db.transaction().execute(async (trx) => {
    const moved = await deps.tasks.move(
      trx,
      {
        id: task.id,
        now,
        claim: task.claim_token,
        status: { from: 'submission_unknown', to: 'failed' },
        submission: { from: 'sending', to: 'sending' },
        billing_state: { from: 'reserved', to: 'released' },
      },
      {
        error_code: 'NOT_RUN',
        error_message: `the upstream ${task.upstream} never received the submission: its look-up has answered "no such job" since ${sinceText}; nothing was charged`,
        pricing_rule:
          'never received by the upstream (look-up): nothing charged, the hold is released',
        finished_at: now,
        due_at: null,
      },
    );
    if (!moved) throw new LostLease(task.id);
    await deleteUndeliveredOutputs(trx, task.id, now);
    const released = await releaseHold(trx, deps.effects, {
      holdId: task.hold_id,
      reason: `task ${task.id} never received by ${task.upstream} (look-up: no such job since ${sinceText})`,
    });
    // A reserved task whose hold is not open is a broken ledger: nothing moves, an operator looks.
    if (!released)
      throw new TaskNeedsOperator(`task ${task.id}: its hold ${task.hold_id} is no longer open`);
  });
  deps.metrics.taskTransitions.inc({ to: 'failed' });
  deps.logger.warn(
    { taskId: task.id, upstream: task.upstream, notReceivedSince: sinceText },
    'task never received by the upstream (look-up): failed, hold released',
  );
}
