import type { Kysely } from 'kysely';

/** Chat: the SSE transcript of streamed requests (for replay), and conversations. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('requests').addColumn('transcript', 'text').execute();
  await db.schema
    .createTable('conversations')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('pending_request_id', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('conversations').execute();
  await db.schema.alterTable('requests').dropColumn('transcript').execute();
}
