import type { Kysely } from 'kysely';

/**
 * Which business requests use which assets. An asset whose using request has not reached a
 * final state cannot be deleted (docs/assets.md, "Delete").
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('asset_uses')
    .addColumn('asset_id', 'text', (column) => column.notNull().references('assets.id'))
    .addColumn('request_id', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('asset_uses_pk', ['asset_id', 'request_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('asset_uses').execute();
}
