import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { describeOnPostgres, dropSchema } from '../helpers/dialects.js';
import { queryPostgres } from '../helpers/postgres-statement.js';

const pgUrl = process.env['TOLLGATE_TEST_PG_URL'] ?? '';

/** Terminates the sessions named `applicationName` (this test's own only: others share the server). */
async function terminateSessions(applicationName: string): Promise<number> {
  const killed = await queryPostgres(
    pgUrl,
    `select pg_terminate_backend(pid) from pg_stat_activity
      where application_name = $1 and pid <> pg_backend_pid()`,
    [applicationName],
  );
  return killed.length;
}

/**
 * `pg` reports a connection the server killed as an `'error'` event, on the pool for an idle
 * connection and on the client itself for one checked out (inside a transaction, between its
 * statements). Unheard, either ends the process; heard, the work on that connection fails and
 * the store goes on with a new one.
 */
// Without TOLLGATE_TEST_PG_URL: registered skipped, loudly (helpers/dialects.ts); CI requires it.
describeOnPostgres('a PostgreSQL store whose connections are killed', () => {
  let store: Store | undefined;
  let schema: string | undefined;
  afterEach(async () => {
    await store?.close();
    await dropSchema(schema);
  });

  async function open() {
    const applicationName = `tollgate_test_${randomBytes(6).toString('hex')}`;
    schema = `t_${randomBytes(6).toString('hex')}`;
    const url = new URL(pgUrl);
    url.searchParams.set('application_name', applicationName);
    const lost: Error[] = [];
    store = await openStore({
      url: url.toString(),
      postgresSchema: schema,
      onConnectionLost: (error) => lost.push(error),
    });
    return { db: store.db, applicationName, lost };
  }

  it('fails only the transaction whose connection was killed mid-way, reports the loss, and goes on', async () => {
    const { db, applicationName, lost } = await open();
    const transaction = db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      expect(await terminateSessions(applicationName)).toBeGreaterThan(0);
      // The kill arrives while this transaction holds the connection between two statements.
      await delay(300);
      await sql`select 1`.execute(trx);
    });
    await expect(transaction).rejects.toThrow();
    expect(lost.length).toBeGreaterThan(0);
    const after = await sql<{ one: number }>`select 1 as one`.execute(db);
    expect(after.rows).toEqual([{ one: 1 }]);
  });

  it('drops idle connections the server killed and serves the next statement on a new one', async () => {
    const { db, applicationName, lost } = await open();
    await Promise.all([sql`select 1`.execute(db), sql`select 2`.execute(db)]);
    expect(await terminateSessions(applicationName)).toBeGreaterThan(0);
    await delay(300);
    expect(lost.length).toBeGreaterThan(0);
    const after = await sql<{ one: number }>`select 1 as one`.execute(db);
    expect(after.rows).toEqual([{ one: 1 }]);
  });
});
