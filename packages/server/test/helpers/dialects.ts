import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openStore, type Store } from '../../src/store/database.js';

/**
 * The databases every store and money test runs on. SQLite always; PostgreSQL when
 * TOLLGATE_TEST_PG_URL is set. Without it the PostgreSQL suites are skipped LOUDLY, and under
 * CI (CI=true) a missing PostgreSQL fails the run instead of skipping.
 */
export interface TestDialect {
  readonly name: 'sqlite' | 'postgres';
  /** A fresh, isolated database for one app: its URL and, for PostgreSQL, its own schema. */
  fresh(): { databaseUrl: string; postgresSchema?: string };
}

const pgUrl = process.env['TOLLGATE_TEST_PG_URL'];

if (pgUrl === undefined || pgUrl === '') {
  const message =
    '\n*** PostgreSQL suites SKIPPED: TOLLGATE_TEST_PG_URL is not set (bash .ci/run sets it) ***\n';
  if (process.env['CI'] === 'true') throw new Error(`${message}CI requires PostgreSQL.`);
  console.warn(message);
}

const sqlite: TestDialect = { name: 'sqlite', fresh: () => ({ databaseUrl: ':memory:' }) };
const postgres: TestDialect = {
  name: 'postgres',
  fresh: () => ({
    databaseUrl: pgUrl ?? '',
    postgresSchema: `t_${randomBytes(6).toString('hex')}`,
  }),
};

export const dialects: TestDialect[] =
  pgUrl === undefined || pgUrl === '' ? [sqlite] : [sqlite, postgres];

/** Drops the per-test PostgreSQL schemas this process created. */
export async function dropSchema(schema: string | undefined): Promise<void> {
  if (schema === undefined || pgUrl === undefined) return;
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  await client.query(`drop schema if exists ${schema} cascade`);
  await client.end();
}

/** A migrated store on a fresh database of `dialect`; `close` also drops its PostgreSQL schema. */
export async function openTestStore(
  dialect: TestDialect,
): Promise<{ store: Store; close: () => Promise<void> }> {
  const fresh = dialect.fresh();
  const schema = fresh.postgresSchema;
  const store = await openStore({
    url: fresh.databaseUrl,
    ...(schema === undefined ? {} : { postgresSchema: schema }),
  });
  return {
    store,
    close: async () => {
      await store.close();
      await dropSchema(schema);
    },
  };
}
