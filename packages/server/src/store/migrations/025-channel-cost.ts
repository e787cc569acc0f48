import type { Kysely } from 'kysely';

/**
 * What the channel that served a request charges the operator for it (docs/routing.md,
 * "Channel cost"): micro-yuan at the channel's `cost` prices, on the usage its upstream
 * reported; null when the channel has no `cost` or nothing was charged.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('requests').addColumn('channel_cost', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('requests').dropColumn('channel_cost').execute();
}
