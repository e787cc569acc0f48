import { sql, type Kysely } from 'kysely';

/**
 * One row per stored asset object (content address), so that the bytes no asset uses any more
 * can be reclaimed without racing an upload of the same content (assets/asset-objects.ts).
 * Existing objects are registered from the assets that name them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('asset_objects')
    .addColumn('sha256', 'text', (column) => column.primaryKey())
    .addColumn('state', 'text', (column) => column.notNull())
    .addColumn('claimed_at', 'bigint', (column) => column.notNull())
    .execute();
  await sql`insert into asset_objects (sha256, state, claimed_at)
    select sha256, 'live', max(created_at) from assets group by sha256`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('asset_objects').execute();
}
