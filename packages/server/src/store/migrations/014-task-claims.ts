import type { Kysely } from 'kysely';

/**
 * The task engine's kernel (docs/tasks.md "Claims", "Vanished jobs"):
 * - `claim_token`: a fresh token per lease; every write of a worker's step is fenced by it, so a
 *   worker that lost its lease can change nothing (a late upstream answer is kept through one
 *   guarded move of its own, never through the lost claim).
 * - `vanished_since`: when the upstream first answered "no such job" to a poll in a row of such
 *   answers (null: the last poll found it); past a bound the task goes to the operator queue.
 * - `download_failures`: how many times in a row a finished task's outputs could not be stored;
 *   past a bound the task goes to the operator queue instead of being retried for good.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('claim_token', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('vanished_since', 'bigint').execute();
  await db.schema
    .alterTable('tasks')
    .addColumn('download_failures', 'integer', (column) => column.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('download_failures').execute();
  await db.schema.alterTable('tasks').dropColumn('vanished_since').execute();
  await db.schema.alterTable('tasks').dropColumn('claim_token').execute();
}
