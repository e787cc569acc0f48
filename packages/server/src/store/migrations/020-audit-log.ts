import type { Kysely } from 'kysely';

/**
 * The audit log (docs/audit.md): one row per operator action and money movement made through
 * the admin API or the console — who (`actor_kind`, `actor_id`, `actor_email`, `address`), what
 * (`action`, `target_id`, `account_id`, `amount`), when (`created_at`) and why (`reason`).
 * Append-only: nothing updates or deletes a row. Rows that move money are written in the same
 * transaction as the movement, so a movement never lacks its row and a rolled-back one has none.
 *
 * Also the console's optional TOTP second factor (docs/console.md): a user's base32 secret
 * (`totp_secret`; pending until `totp_enabled_at`), the last time step accepted (a code is used
 * once), and when a session proved the second factor (`totp_verified_at`).
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
  await db.schema.alterTable('console_users').addColumn('totp_secret', 'text').execute();
  await db.schema.alterTable('console_users').addColumn('totp_enabled_at', 'bigint').execute();
  await db.schema.alterTable('console_users').addColumn('totp_last_step', 'bigint').execute();
  await db.schema.alterTable('console_sessions').addColumn('totp_verified_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('console_sessions').dropColumn('totp_verified_at').execute();
  for (const column of ['totp_last_step', 'totp_enabled_at', 'totp_secret'])
    await db.schema.alterTable('console_users').dropColumn(column).execute();
  await db.schema.dropTable('audit_events').execute();
}
