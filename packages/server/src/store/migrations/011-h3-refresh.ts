import type { Kysely } from 'kysely';

/**
 * H3 tasks (docs/h3.md): `GET /v1/h3/tasks/{id}?refresh=true` asks the upstream at most once per
 * interval per task, on every instance alike, so the time of the last refresh is kept on the row.
 * Image, video and H3 tasks share the table (kind `h3`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('refreshed_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('refreshed_at').execute();
}
