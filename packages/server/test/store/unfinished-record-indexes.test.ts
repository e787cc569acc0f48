import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import type { Store } from '../../src/store/database.js';
import { describeEachDialect, openTestStore } from '../helpers/dialects.js';
import { migratorOf, sqlitePlanOf } from '../helpers/schema-checks.js';

/**
 * Migration 031 (issue 19) replaces the index of every record's status, written on every claim
 * and finish, by two partial indexes of the only states anyone looks up by status. The risks: a
 * reader left to scan every record (the sweeper, the resolution queue), a finished record still
 * written into a status index, and a way back that does not restore the old index.
 */
describeEachDialect('the unfinished-record indexes on $name', (dialect) => {
  let opened: { store: Store; close: () => Promise<void> } | undefined;
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });

  async function indexesOfRequests(store: Store): Promise<string[]> {
    const rows =
      store.dialect === 'sqlite'
        ? await sql<{
            name: string;
          }>`select name from sqlite_master where type = 'index' and tbl_name = 'requests'`.execute(
            store.db,
          )
        : await sql<{
            name: string;
          }>`select indexname as name from pg_indexes where tablename = 'requests' and schemaname = current_schema()`.execute(
            store.db,
          );
    return rows.rows.map((row) => row.name).sort();
  }

  it('takes the status index off every record and keeps the lookups by state, both ways', async () => {
    opened = await openTestStore(dialect);
    const { store } = opened;
    const after = await indexesOfRequests(store);
    expect(after).toEqual(expect.arrayContaining(['requests_processing', 'requests_unresolved']));
    expect(after).not.toContain('requests_status');

    const migrations = await migratorOf(store);
    expect((await migrations.migrateTo('030-hot-path-indexes')).error).toBeUndefined();
    const before = await indexesOfRequests(store);
    expect(before).toContain('requests_status');
    expect(before).not.toContain('requests_processing');
    expect((await migrations.migrateToLatest()).error).toBeUndefined();
    expect(await indexesOfRequests(store)).toEqual(after);
  });

  it('finds the stale and the unresolved records through their own small index (SQLite plans)', async () => {
    opened = await openTestStore(dialect);
    if (opened.store.dialect !== 'sqlite') return;
    const { db } = opened.store;
    const plan = (query: { compile(): { sql: string } }) => sqlitePlanOf(db, query);
    // The sweeper's query (request-service.ts, markStaleAsUnknown).
    const stale = db
      .selectFrom('requests')
      .select('id')
      .where('status', '=', sql.lit('processing'))
      .where('updated_at', '<', sql.lit(5));
    expect(await plan(stale)).toMatch(/USING (COVERING )?INDEX requests_processing/);
    // The resolution queue's (request-store.ts, awaitingResolution), oldest first.
    const unresolved = db
      .selectFrom('requests')
      .select('id')
      .where('requests.status', '=', sql.lit('submission_unknown'))
      .orderBy('requests.created_at', 'asc')
      .orderBy('requests.id', 'asc');
    const unresolvedPlan = await plan(unresolved);
    expect(unresolvedPlan).toMatch(/USING (COVERING )?INDEX requests_unresolved/);
    expect(unresolvedPlan).not.toMatch(/TEMP B-TREE/);

    // Partial: a record in any other state (a finished one) has no entry in either.
    const partial = await sql<{
      name: string;
      partial: number;
    }>`select name, partial from pragma_index_list('requests')`.execute(db.withoutPlugins());
    expect(
      partial.rows
        .filter((row) => row.name === 'requests_processing' || row.name === 'requests_unresolved')
        .map((row) => row.partial),
    ).toEqual([1, 1]);
  });
});
