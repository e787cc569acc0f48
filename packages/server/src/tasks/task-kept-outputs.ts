import type { Kysely } from 'kysely';
import type { AssetTable, Database } from '../store/schema.js';
import type { LeasedTask, TaskStore } from './task-store.js';

/**
 * A delivery's stored outputs are remembered as soon as their bytes are placed: the task's
 * undelivered asset rows (`delivered_at` null) are inserted at once, in a transaction fenced by
 * the claim token, not only in the transaction that finishes the task. When that final
 * transaction fails (a lost claim, a crash, a database error), the next step finds them and
 * finishes with them instead of downloading the outputs again (docs/tasks.md "Outputs").
 */

/** The outputs an earlier step of this task stored and has not delivered, oldest first. */
export async function keptOutputsOf(db: Kysely<Database>, taskId: string): Promise<AssetTable[]> {
  return db
    .selectFrom('assets')
    .selectAll()
    .where('task_id', '=', taskId)
    .where('delivered_at', 'is', null)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/**
 * Records the outputs this step stored, fenced: only while this claim still holds the task in
 * `status` (staying put is a guard, task-states.ts). Outputs an earlier step kept and that no
 * longer match the result are deleted first (their bytes go to the sweeper). Returns whether it
 * was recorded (false: the claim was lost; the rows are not inserted and the placed bytes,
 * named by no asset, are reclaimed by the sweeper).
 */
export async function recordStoredOutputs(
  deps: { db: Kysely<Database>; tasks: TaskStore },
  task: LeasedTask,
  status: 'queued' | 'running',
  assets: readonly AssetTable[],
  now: number,
): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    const held = await deps.tasks.move(trx, {
      id: task.id,
      now,
      claim: task.claim_token,
      status: { from: status, to: status },
    });
    if (!held) return false;
    await deleteUndeliveredOutputs(trx, task.id, now);
    if (assets.length > 0)
      await trx
        .insertInto('assets')
        .values([...assets])
        .execute();
    return true;
  });
}

/**
 * Deletes a task's stored, undelivered outputs (their bytes go to the sweeper once no asset
 * names them): when its settlement window closes, when an operator releases it, when it fails.
 */
export async function deleteUndeliveredOutputs(
  executor: Kysely<Database>,
  taskId: string,
  now: number,
): Promise<void> {
  await executor
    .updateTable('assets')
    .set({ deleted_at: now })
    .where('task_id', '=', taskId)
    .where('delivered_at', 'is', null)
    .where('deleted_at', 'is', null)
    .execute();
}
