import type { Kysely } from 'kysely';

/**
 * The task engine's kernel (docs/tasks.md "Claims", "Vanished jobs", "Settlement window"):
 * - `claim_token`: a fresh token per lease; every write of a worker's step is fenced by it, so a
 *   worker that lost its lease can change nothing (a late upstream answer is kept through one
 *   guarded move of its own, never through the lost claim).
 * - `vanished_since`: when the upstream first answered "no such job" to a poll in a row of such
 *   answers (null: the last poll found it); past a bound the task goes to the operator queue.
 * - `settle_by`: until when a priced task may be settled; past it the hold is released and the
 *   outputs deleted (null: not awaiting settlement).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('claim_token', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('vanished_since', 'bigint').execute();
  await db.schema.alterTable('tasks').addColumn('settle_by', 'bigint').execute();
  // Finds the tasks awaiting settlement whose window has passed, without a scan.
  await db.schema.createIndex('tasks_settle_by').on('tasks').column('settle_by').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tasks_settle_by').execute();
  await db.schema.alterTable('tasks').dropColumn('settle_by').execute();
  await db.schema.alterTable('tasks').dropColumn('vanished_since').execute();
  await db.schema.alterTable('tasks').dropColumn('claim_token').execute();
}
