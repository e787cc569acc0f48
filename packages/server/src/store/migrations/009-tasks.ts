import { sql, type Kysely } from 'kysely';

/**
 * Image and video tasks (docs/tasks.md). A task is created in the same transaction as its
 * creation record (status `accepted`, `task_id` set), its hold and its asset uses; a worker
 * leases it (`lease_owner`, `lease_until`), submits it once, polls it, stores its outputs as
 * assets (undelivered until settlement), and prices it. `status` is what the caller sees;
 * `submission` says whether a byte of the submission may have left (the rule that keeps a task
 * from being submitted twice); `billing_state` is the money side.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tasks')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('request_id', 'text', (column) => column.notNull())
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('upstream', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('submission', 'text', (column) => column.notNull())
    .addColumn('input', 'text', (column) => column.notNull())
    .addColumn('quoted_amount', 'bigint', (column) => column.notNull())
    .addColumn('price_version', 'text', (column) => column.notNull())
    .addColumn('line_items', 'text', (column) => column.notNull())
    .addColumn('hold_id', 'text', (column) => column.notNull())
    .addColumn('billing_state', 'text', (column) => column.notNull())
    .addColumn('actual_amount', 'bigint')
    .addColumn('actual_line_items', 'text')
    .addColumn('pricing_rule', 'text')
    .addColumn('settled_amount', 'bigint')
    .addColumn('upstream_task_id', 'text')
    .addColumn('outputs', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('resolution', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('due_at', 'bigint')
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('submitted_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .addColumn('settled_at', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('tasks_due').on('tasks').columns(['due_at']).execute();
  await db.schema.createIndex('tasks_request').on('tasks').columns(['request_id']).execute();
  await db.schema
    .createIndex('tasks_account')
    .on('tasks')
    .columns(['account_id', 'created_at'])
    .execute();
  // The creation record names its task.
  await db.schema.alterTable('requests').addColumn('task_id', 'text').execute();
  // Task outputs are assets of the creating account, readable only once delivered.
  await db.schema.alterTable('assets').addColumn('task_id', 'text').execute();
  await db.schema.alterTable('assets').addColumn('delivered_at', 'bigint').execute();
  // Uploads are delivered when they are created.
  await sql`update assets set delivered_at = created_at`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('assets').dropColumn('delivered_at').execute();
  await db.schema.alterTable('assets').dropColumn('task_id').execute();
  await db.schema.alterTable('requests').dropColumn('task_id').execute();
  await db.schema.dropTable('tasks').execute();
}
