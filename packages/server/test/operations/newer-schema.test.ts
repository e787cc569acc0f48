import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type StoreOptions } from '../../src/store/database.js';
import { migrationProvider } from '../../src/store/migrations/index.js';
import { SqliteDatabase } from '../../src/store/sqlite-binding.js';
import { describeEachDialect, dropSchema } from '../helpers/dialects.js';
import { queryPostgres } from '../helpers/postgres-statement.js';
import { requireBuild, startExpectingRefusal, tollgate } from './gateway-process.js';

const FUTURE = '099-from-a-newer-tollgate';
/** This version's newest migration (the last in name order). */
const NEWEST_KNOWN = Object.keys(await migrationProvider.getMigrations())
  .sort()
  .at(-1);

/**
 * What a newer Tollgate leaves behind after an upgrade: its migration recorded, and the schema
 * it made (here a column this version has never heard of).
 */
async function migrateAsANewerVersion(options: StoreOptions): Promise<void> {
  const store = await openStore(options);
  await sql`alter table accounts add column future_column integer`.execute(store.db);
  await sql`insert into kysely_migration (name, timestamp) values (${FUTURE}, ${new Date().toISOString()})`.execute(
    store.db,
  );
  await store.close();
}

async function appliedMigrations(options: StoreOptions): Promise<string[]> {
  // A raw connection: opening the store would run the very check under test.
  if (options.url.startsWith('postgres')) {
    const rows = await queryPostgres<{ name: string }>(
      options.url,
      `select name from ${options.postgresSchema ?? 'public'}.kysely_migration order by name`,
    );
    return rows.map((row) => row.name);
  }
  const db = new SqliteDatabase(options.url, { readonly: true });
  const names = db
    .prepare('select name from kysely_migration order by name')
    .pluck()
    .all() as string[];
  db.close();
  return names;
}

/**
 * Rollback (docs/operations.md, "Upgrade and rollback"): an older binary started on a database
 * a newer one has migrated must not run on a schema it does not know (money tables with
 * columns, constraints or invariants it would ignore). It refuses with a message naming the
 * unknown migration and its own newest one, and changes nothing. Before, Kysely's migrator
 * refused with "corrupted migrations: previously executed migration … is missing", which reads
 * like damage and says nothing of versions.
 */
describeEachDialect('an older binary on a newer schema ($name)', (dialect) => {
  let dir: string | undefined;
  let schema: string | undefined;
  afterEach(async () => {
    await dropSchema(schema);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to open the store, naming the newer migration, and leaves the database as it was', async () => {
    const fresh = dialect.fresh();
    schema = fresh.postgresSchema;
    if (dialect.name === 'sqlite') dir = mkdtempSync(path.join(tmpdir(), 'tollgate-newer-'));
    const options: StoreOptions = {
      url: dir === undefined ? fresh.databaseUrl : path.join(dir, 'tollgate.sqlite'),
      ...(schema === undefined ? {} : { postgresSchema: schema }),
    };
    await migrateAsANewerVersion(options);
    const before = await appliedMigrations(options);

    const opening = openStore(options);
    await expect(opening).rejects.toThrow(
      `the database was migrated by a newer Tollgate: migration ${FUTURE} is unknown to this version (its newest is ${NEWEST_KNOWN})`,
    );
    await expect(opening).rejects.toMatchObject({ name: 'NewerSchemaError' });
    expect(await appliedMigrations(options)).toEqual(before);
  });
});

describe('an older gateway process on a newer SQLite schema', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('start-up and the CLI stop with one line naming the newer migration and what to do', async () => {
    requireBuild();
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-newer-process-'));
    await migrateAsANewerVersion({ url: path.join(dir, 'tollgate.sqlite') });
    const { code, lines } = await startExpectingRefusal({ TOLLGATE_DATA_DIR: dir });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`migration ${FUTURE} is unknown to this version`);
    expect(lines[0]).toContain('restore the backup taken before the upgrade');

    const cli = await tollgate({ TOLLGATE_DATA_DIR: dir }, 'ledger', 'check');
    expect(cli.code).toBe(1);
    // Every CLI error is the JSON error shape (docs/admin.md).
    expect(JSON.parse(cli.stderr)).toEqual({
      error: {
        code: 'COMMAND_FAILED',
        message:
          `the database was migrated by a newer Tollgate: migration ${FUTURE} is unknown to this version ` +
          `(its newest is ${NEWEST_KNOWN}). Run the newer version, or restore the backup taken ` +
          `before the upgrade (docs/operations.md, "Upgrade and rollback")`,
      },
    });
  }, 60_000);
});
