import type { Kysely } from 'kysely';

/**
 * Usage an upstream reported beyond what the gateway allowed (docs/billing.md "Usage beyond the
 * cap"): `usage_flag` says what was reported and what was billed instead; an operator reviews it
 * (`usage_reviewed_at`, `usage_review`: who and why).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('requests').addColumn('usage_flag', 'text').execute();
  await db.schema.alterTable('requests').addColumn('usage_reviewed_at', 'bigint').execute();
  await db.schema.alterTable('requests').addColumn('usage_review', 'text').execute();
  await db.schema
    .createIndex('requests_usage_flag')
    .on('requests')
    .columns(['usage_flag', 'usage_reviewed_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('requests_usage_flag').execute();
  await db.schema.alterTable('requests').dropColumn('usage_review').execute();
  await db.schema.alterTable('requests').dropColumn('usage_reviewed_at').execute();
  await db.schema.alterTable('requests').dropColumn('usage_flag').execute();
}
