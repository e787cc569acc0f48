import type { Kysely } from 'kysely';
import type { AuditWrite } from '../audit/audit-log.js';
import { releaseHold } from '../billing/ledger.js';
import { type LedgerEffects } from '../billing/journal.js';
import type { Database } from '../store/schema.js';
import { deleteUndeliveredOutputs } from './task-kept-outputs.js';
import type { TaskStore } from './task-store.js';

/** Tasks expired per sweep at most; the next sweep takes the rest. */
const EXPIRE_BATCH = 100;

/** What the task says once it expired (its pricing rule). */
export const EXPIRED_RULE =
  'not settled within the settlement window: nothing charged, the hold is released, the outputs were deleted';

/** What the task says once an operator released it while it awaited settlement. */
export const RELEASED_RULE =
  'released by an operator while it awaited settlement: nothing charged, the hold is released, the outputs were deleted';

/**
 * Expires every task that awaited settlement past its window (`settlement_expires_at`, fixed when
 * it was priced; docs/tasks.md "Settlement window"), each in one transaction: its hold released
 * (nothing charged), billing `pending` → `expired` (the guarded move of task-states.ts), its
 * undelivered outputs deleted (asset rows marked deleted: unreadable at once, their bytes
 * reclaimed by the sweeper as for any deleted asset; an H3 text answer dropped).
 *
 * The hold is resolved first, then the task moved — the order a settle takes — so that a settle
 * and an expiry (or two sweeping instances) serialise on the hold: exactly one of them resolves
 * it, the other changes nothing. Returns how many tasks this call expired.
 */
export async function expireUnsettledTasks(
  deps: { db: Kysely<Database>; tasks: TaskStore; effects: LedgerEffects },
  now: number,
): Promise<number> {
  const due = await deps.db
    .selectFrom('tasks')
    .select(['id', 'kind', 'hold_id'])
    .where('billing_state', '=', 'pending')
    .where('settlement_expires_at', '<=', now)
    .orderBy('settlement_expires_at')
    .limit(EXPIRE_BATCH)
    .execute();
  let expired = 0;
  for (const task of due) {
    const done = await expireTask(deps, task, now, {
      reason: `task ${task.id} was not settled within the settlement window`,
    });
    if (done) expired += 1;
  }
  return expired;
}

/**
 * Expires one task awaiting settlement, now: its hold released, billing `pending` → `expired`,
 * its outputs deleted — the sweeper's expiry, and an operator's release of a task nobody settles
 * (with the operator's `resolution` kept on the task). False when the hold was already resolved
 * (a settle, another sweeper or operator came first): nothing changed.
 */
export async function expireTask(
  deps: { db: Kysely<Database>; tasks: TaskStore; effects: LedgerEffects },
  task: { id: string; hold_id: string },
  now: number,
  why: { reason: string; resolution?: string; audit?: AuditWrite | undefined },
): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    const released = await releaseHold(trx, deps.effects, {
      holdId: task.hold_id,
      reason: why.reason,
    });
    if (!released) return false;
    const moved = await deps.tasks.move(
      trx,
      { id: task.id, now, billing_state: { from: 'pending', to: 'expired' } },
      {
        actual_amount: null,
        outputs: null,
        pricing_rule: why.resolution === undefined ? EXPIRED_RULE : RELEASED_RULE,
        due_at: null,
        ...(why.resolution === undefined ? {} : { resolution: why.resolution }),
      },
    );
    // An open hold on a task that is not pending cannot be: roll the release back, loudly.
    if (!moved) throw new Error(`task ${task.id} held an open hold but was not pending`);
    await why.audit?.(trx);
    await deleteUndeliveredOutputs(trx, task.id, now);
    return true;
  });
}
