import type { Kysely } from 'kysely';

/**
 * Public shares behind review (docs/shares.md). A share names one delivered asset of its owner
 * (and the task it came from, when shared by task); its `state` moves only as
 * shares/share-states.ts lists. `token_hash` is the SHA-256 of the public token: the token
 * itself is never stored (it is derived from the owner's key, shares/share-token.ts). Every
 * request and decision is a row of `share_events`: who (`key:<id>` or `operator`), what, why.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('shares')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('task_id', 'text')
    .addColumn('asset_id', 'text', (column) => column.notNull().references('assets.id'))
    .addColumn('state', 'text', (column) => column.notNull())
    .addColumn('token_hash', 'text', (column) => column.notNull().unique())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('decided_at', 'bigint')
    .addColumn('decision_reason', 'text')
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  // The owner's list (newest first) and the review queue (oldest first, by state).
  await db.schema
    .createIndex('shares_key')
    .on('shares')
    .columns(['key_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('shares_state')
    .on('shares')
    .columns(['state', 'created_at'])
    .execute();
  await db.schema
    .createTable('share_events')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('share_id', 'text', (column) => column.notNull().references('shares.id'))
    // 0 for the request, then one more per decision: the journal's order (times can tie).
    .addColumn('sequence', 'integer', (column) => column.notNull())
    .addColumn('at', 'bigint', (column) => column.notNull())
    .addColumn('actor', 'text', (column) => column.notNull())
    .addColumn('action', 'text', (column) => column.notNull())
    .addColumn('reason', 'text')
    .execute();
  await db.schema
    .createIndex('share_events_sequence')
    .on('share_events')
    .columns(['share_id', 'sequence'])
    .unique()
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('share_events').execute();
  await db.schema.dropTable('shares').execute();
}
