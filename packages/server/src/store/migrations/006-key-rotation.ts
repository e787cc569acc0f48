import type { Kysely } from 'kysely';

/** The key that replaced this one by rotation (auth/key-service.ts `rotate`); null otherwise. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('replaced_by', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('replaced_by').execute();
}
