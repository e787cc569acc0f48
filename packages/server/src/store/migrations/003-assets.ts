import type { Kysely } from 'kysely';

/** Personal assets: metadata here, bytes in content-addressed storage. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('assets')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('sha256', 'text', (column) => column.notNull())
    .addColumn('media_type', 'text', (column) => column.notNull())
    .addColumn('bytes', 'bigint', (column) => column.notNull())
    .addColumn('width', 'integer')
    .addColumn('height', 'integer')
    .addColumn('duration_ms', 'bigint')
    .addColumn('file_name', 'text')
    .addColumn('model', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('deleted_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('assets_account_created')
    .on('assets')
    .columns(['account_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('assets_sha256').on('assets').column('sha256').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('assets').execute();
}
