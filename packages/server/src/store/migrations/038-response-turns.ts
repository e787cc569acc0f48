import type { Kysely } from 'kysely';

/**
 * A stored Responses turn (`POST /v1/responses` with `store` not false; docs/agents.md, "State
 * Tollgate keeps"): the conversation's input items up to and including this turn's, so that a
 * later turn naming it as `previous_response_id` continues it, and what its response object repeats
 * of its request (`echo`), for `GET /v1/responses/{id}` while it has no answer. Its output is the request
 * record's own answer; the row lives as long as that record (purged with it).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('response_turns')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('items', 'text', (column) => column.notNull())
    .addColumn('echo', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('response_turns').execute();
}
