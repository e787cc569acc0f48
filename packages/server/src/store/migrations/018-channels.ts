import type { Kysely } from 'kysely';

/**
 * Channels (docs/routing.md): the channel that served a request and every attempt made for it
 * (JSON), the channel a task was submitted on (it stays there for polls and downloads), and the
 * channels an operator disabled (a row per disabled channel, shared by every instance).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('requests').addColumn('channel', 'text').execute();
  await db.schema.alterTable('requests').addColumn('channel_attempts', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('channel', 'text').execute();
  await db.schema
    .createTable('disabled_channels')
    .addColumn('channel_id', 'text', (column) => column.primaryKey())
    .addColumn('reason', 'text')
    .addColumn('disabled_at', 'bigint', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('disabled_channels').execute();
  await db.schema.alterTable('tasks').dropColumn('channel').execute();
  await db.schema.alterTable('requests').dropColumn('channel_attempts').execute();
  await db.schema.alterTable('requests').dropColumn('channel').execute();
}
