import { randomBytes } from 'node:crypto';
import { describe } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { runOnPostgres } from './postgres-statement.js';
import { createMigratedSchema } from './schema-template.js';
import {
  describeNeeding,
  leftOutOnPurpose,
  requiredService,
  titleFor,
} from './required-services.js';

/**
 * The databases every store and money test runs on: SQLite always, PostgreSQL when
 * TOLLGATE_TEST_PG_URL is set. Without it the PostgreSQL suites are skipped LOUDLY and counted
 * (`describeEachDialect`), and under CI (CI=true) a missing PostgreSQL fails the run instead.
 */
export interface TestDialect {
  readonly name: 'sqlite' | 'postgres';
  /** A fresh, isolated database for one app: its URL and, for PostgreSQL, its own schema. */
  fresh(): { databaseUrl: string; postgresSchema?: string };
}

/**
 * Whether the PostgreSQL suites run, and why not (read by the summary reporter via suite meta).
 * `TOLLGATE_TEST_DIALECTS=sqlite` leaves them out on purpose: CI's Node 24 pass runs the SQLite
 * variants of every file (the runtime-specific part: its own SQLite binding) and the PostgreSQL
 * suites of a few files only, since the `pg` driver and the SQL are the same JavaScript on both
 * Node versions and Node 20's pass ran them all (docs/ci.md).
 */
export const postgresService =
  process.env['TOLLGATE_TEST_DIALECTS'] === 'sqlite'
    ? leftOutOnPurpose(
        'PostgreSQL',
        'TOLLGATE_TEST_DIALECTS=sqlite: this pass runs the SQLite variants (docs/ci.md)',
      )
    : requiredService('PostgreSQL', 'TOLLGATE_TEST_PG_URL');
const pgUrl = postgresService.url;

const sqlite: TestDialect = { name: 'sqlite', fresh: () => ({ databaseUrl: ':memory:' }) };
const postgres: TestDialect = {
  name: 'postgres',
  fresh: () => ({
    databaseUrl: pgUrl ?? '',
    postgresSchema: `t_${randomBytes(6).toString('hex')}`,
  }),
};

/** The dialects this run reaches (`const [sqlite] = dialects` for SQLite-only files). */
export const dialects: TestDialect[] = pgUrl === undefined ? [sqlite] : [sqlite, postgres];

/**
 * `describe.each(dialects)` that also registers the PostgreSQL variant when PostgreSQL is not
 * configured, as a skipped suite: vitest then counts its tests as skipped, and the summary says
 * why. `$name` in the title becomes the quoted dialect name, as with `describe.each`.
 */
export function describeEachDialect(title: string, body: (dialect: TestDialect) => void): void {
  describe(titleFor(title, sqlite.name), () => body(sqlite));
  describeOnPostgres(title, body);
}

/** A suite for PostgreSQL only (several instances sharing one database): skipped and counted without it. */
export function describeOnPostgres(title: string, body: (dialect: TestDialect) => void): void {
  describeNeeding(postgresService, titleFor(title, postgres.name), () => body(postgres));
}

/** Drops the per-test PostgreSQL schemas this process created. */
export async function dropSchema(schema: string | undefined): Promise<void> {
  if (schema === undefined || pgUrl === undefined) return;
  await runOnPostgres(pgUrl, `drop schema if exists ${schema} cascade`);
}

/**
 * `dialect.fresh()`, already migrated on PostgreSQL: its schema is a copy of a migrated one
 * (schema-template.ts), which the store opening it finds current. SQLite's `:memory:` migrates
 * in a few milliseconds on open.
 */
export async function freshMigrated(
  dialect: TestDialect,
): Promise<{ databaseUrl: string; postgresSchema?: string }> {
  const fresh = dialect.fresh();
  if (fresh.postgresSchema !== undefined)
    await createMigratedSchema(fresh.databaseUrl, fresh.postgresSchema);
  return fresh;
}

/** A migrated store on a fresh database of `dialect`; `close` also drops its PostgreSQL schema. */
export async function openTestStore(
  dialect: TestDialect,
): Promise<{ store: Store; close: () => Promise<void> }> {
  const fresh = await freshMigrated(dialect);
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
