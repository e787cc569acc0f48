import type { Kysely } from 'kysely';

/**
 * What was spent (docs/usage.md): a key lists its own records newest first (`GET /v1/requests`:
 * `key_id`, then `created_at` and `id` as the cursor's order), and an account's usage and
 * statement read its journal by time (`account_id`, `created_at`). The journal's existing index
 * on `account_id` alone would make every period read the account's whole history.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('requests_key_created')
    .on('requests')
    .columns(['key_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('journal_account_created')
    .on('journal')
    .columns(['account_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('journal_account_created').execute();
  await db.schema.dropIndex('requests_key_created').execute();
}
