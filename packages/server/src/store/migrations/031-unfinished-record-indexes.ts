import { sql, type Kysely } from 'kysely';

/**
 * The records' status index holds only the records someone looks up by status (issue 19;
 * bench/RESULTS.md, "Partial status indexes"). `requests_status` had an entry for every record,
 * moved on every finish, and so wrote about two pages per group commit on the hot path; but
 * only two states are ever looked up by status, each by one kind of reader:
 *
 * - `processing`, by the sweeper, with its age (`updated_at`): `requests_processing`;
 * - `submission_unknown`, by the operator's resolution queue, its summary and the reconciler,
 *   oldest first (`created_at`, `id`): `requests_unresolved`.
 *
 * Each is a partial index whose condition is the readers' own term (`status = '…'`), which both
 * SQLite and PostgreSQL match to the query exactly. A record enters the first when claimed and
 * leaves it when finished, so it stays as small as the number of requests in flight; a finished
 * record is in neither. Listings filter by status within an owner's index (`requests_key_created`,
 * `requests_account_created`), and the purge reads `requests_expires`: neither used
 * `requests_status`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('requests_processing')
    .ifNotExists()
    .on('requests')
    .column('updated_at')
    .where(sql.ref('status'), '=', sql.lit('processing'))
    .execute();
  await db.schema
    .createIndex('requests_unresolved')
    .ifNotExists()
    .on('requests')
    .columns(['created_at', 'id'])
    .where(sql.ref('status'), '=', sql.lit('submission_unknown'))
    .execute();
  await db.schema.dropIndex('requests_status').ifExists().execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('requests_status').on('requests').column('status').execute();
  await db.schema.dropIndex('requests_unresolved').execute();
  await db.schema.dropIndex('requests_processing').execute();
}
