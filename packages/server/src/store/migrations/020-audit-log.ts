import type { Kysely } from 'kysely';

/**
 * The audit log (docs/audit.md): one row per operator action and money movement made through
 * the admin API or the console — who (`actor_kind`, `actor_id`, `actor_email`, `address`), what
 * (`action`, `target_id`, `account_id`, `amount`), when (`created_at`) and why (`reason`).
 * Append-only: nothing updates or deletes a row. Rows that move money are written in the same
 * transaction as the movement, so a movement never lacks its row and a rolled-back one has none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('actor_kind', 'text', (column) => column.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor_email', 'text')
    .addColumn('address', 'text')
    .addColumn('action', 'text', (column) => column.notNull())
    .addColumn('target_id', 'text')
    .addColumn('account_id', 'text')
    .addColumn('amount', 'bigint')
    .addColumn('reason', 'text')
    .addColumn('detail', 'text')
    .execute();
  await db.schema
    .createIndex('audit_events_created')
    .on('audit_events')
    .columns(['created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('audit_events_account')
    .on('audit_events')
    .columns(['account_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
}
