import { sql, type Kysely } from 'kysely';

/** The default settlement window, for tasks that were already awaiting settlement. */
const DEFAULT_WINDOW_MS = 7 * 86_400_000;

/**
 * The settlement window (docs/tasks.md "Settlement window"): `settlement_expires_at` is when a
 * priced task stops awaiting settlement and expires (nothing charged, hold released, outputs
 * deleted). Tasks already awaiting settlement get the default window from when they were priced
 * (`finished_at`); the sweeper finds due ones through the index.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('settlement_expires_at', 'bigint').execute();
  await sql`update tasks set settlement_expires_at = coalesce(finished_at, updated_at) + ${DEFAULT_WINDOW_MS} where billing_state = 'pending'`.execute(
    db,
  );
  await db.schema
    .createIndex('tasks_settlement_expires')
    .on('tasks')
    .columns(['settlement_expires_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('tasks_settlement_expires').execute();
  await db.schema.alterTable('tasks').dropColumn('settlement_expires_at').execute();
}
