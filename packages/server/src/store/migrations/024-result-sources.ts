import type { Kysely } from 'kysely';

/**
 * `result_sources` (docs/tasks.md "Downloads"): the sources of a finished task's outputs (the
 * URLs the upstream gave and its delivery report, JSON) kept while storing them keeps failing,
 * so that a later step retries the download from them without calling the upstream again (a
 * synchronous image answer cannot be asked for twice). Null once the task is delivered, and for
 * every task whose outputs were stored at the first try.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('result_sources', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').dropColumn('result_sources').execute();
}
