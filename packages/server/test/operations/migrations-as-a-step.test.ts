import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Migrator } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/load.js';
import { openStore } from '../../src/store/database.js';
import { migrationProvider } from '../../src/store/migrations/index.js';
import { describeOnPostgres } from '../helpers/dialects.js';
import {
  requireBuild,
  startExpectingRefusal,
  startGatewayProcess,
  tollgate,
  writeConfig,
  type GatewayProcess,
} from './gateway-process.js';
import { databaseUrlOf, queryPostgres } from '../helpers/postgres-statement.js';

const pgUrl = process.env['TOLLGATE_TEST_PG_URL'] ?? '';
const MIGRATIONS = Object.keys(await migrationProvider.getMigrations()).sort();
const NEWEST = MIGRATIONS.at(-1) ?? '';
/**
 * The test run sets `TOLLGATE_MIGRATE_ON_START=1` for every process it starts (vitest.config.ts);
 * an empty value is "not set" (config/load.ts), so these processes get the shipped default.
 */
const DEFAULT_MIGRATE_ON_START = { TOLLGATE_MIGRATE_ON_START: '' };

async function appliedMigrations(url: string): Promise<string[]> {
  const [table] = await queryPostgres<{ oid: string | null }>(
    url,
    `select to_regclass('kysely_migration')::text as oid`,
  );
  if (table?.oid === null || table?.oid === undefined) return [];
  const rows = await queryPostgres<{ name: string }>(
    url,
    'select name from kysely_migration order by 1',
  );
  return rows.map((row) => row.name);
}

/**
 * docs/deploy.md, "Migrations": on PostgreSQL, where several instances share one database, the
 * schema moves once, by `tollgate migrate`, before instances start; an instance that finds the
 * schema behind its code refuses to start with one line instead of migrating beside instances
 * still running the old code (LiteLLM's most reported deployment failure is the opposite: a new
 * version serving before its migrations finished).
 */
describeOnPostgres('migrations as their own step (PostgreSQL)', () => {
  const databases: string[] = [];
  const gateways: GatewayProcess[] = [];
  let dir: string | undefined;
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.stop();
    for (const name of databases.splice(0))
      await queryPostgres(pgUrl, `drop database if exists ${name} with (force)`);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function freshDatabase(): Promise<string> {
    const name = `tollgate_migrate_${randomBytes(4).toString('hex')}`;
    await queryPostgres(pgUrl, `create database ${name}`);
    databases.push(name);
    return databaseUrlOf(pgUrl, name);
  }

  it('a gateway on an unmigrated database refuses with one line and creates nothing; `tollgate migrate` (twice at once) then lets it start and serve', async () => {
    requireBuild();
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-migrate-step-'));
    const url = await freshDatabase();
    const env = {
      ...DEFAULT_MIGRATE_ON_START,
      TOLLGATE_DATABASE_URL: url,
      TOLLGATE_DATA_DIR: dir,
      TOLLGATE_CONFIG: writeConfig(dir),
    };

    const refused = await startExpectingRefusal(env);
    expect(refused.code).toBe(1);
    expect(refused.lines).toEqual([
      `tollgate: the database schema is behind this version: ${MIGRATIONS.length} migrations pending ` +
        `(${MIGRATIONS[0]} … ${NEWEST}). Run \`tollgate migrate\` first, or set ` +
        'TOLLGATE_MIGRATE_ON_START=1 to let this process apply them (docs/deploy.md, "Migrations")',
    ]);
    expect(await appliedMigrations(url)).toEqual([]);
    // An admin command follows the same rule as the gateway: it does not migrate behind its back.
    const check = await tollgate(env, 'ledger', 'check');
    expect(check.code).toBe(1);
    expect(JSON.parse(check.stderr)).toMatchObject({
      error: { code: 'COMMAND_FAILED', message: expect.stringContaining('schema is behind') },
    });
    expect(await appliedMigrations(url)).toEqual([]);

    // Two operators (or two compose replicas) migrating at once: the lock lets one apply, and
    // the other finds nothing left to do; both succeed.
    const [first, second] = await Promise.all([tollgate(env, 'migrate'), tollgate(env, 'migrate')]);
    for (const run of [first, second]) {
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({ schema: NEWEST, migrations: MIGRATIONS.length });
    }
    expect(await appliedMigrations(url)).toEqual(MIGRATIONS);

    const gateway = await startGatewayProcess(env);
    gateways.push(gateway);
    const { key } = await gateway.account(1_000);
    expect(await gateway.embed(key, 'after the migration step')).toBe(200);
    const ledger = await tollgate(env, 'ledger', 'check');
    expect(ledger.code).toBe(0);
  }, 120_000);

  it('a rolling upgrade: one migration behind, instances refuse until `tollgate migrate`, then are replaced one by one while requests keep succeeding', async () => {
    requireBuild();
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-rolling-'));
    const url = await freshDatabase();
    // The database as the previous release left it: every migration but the newest.
    const store = await openStore({ url, checkpointWorker: false });
    const down = await new Migrator({
      db: store.migrationDb ?? store.db,
      provider: migrationProvider,
    }).migrateDown();
    expect(down.error).toBeUndefined();
    await store.close();
    expect(await appliedMigrations(url)).toEqual(MIGRATIONS.slice(0, -1));

    const env = (name: string) => ({
      ...DEFAULT_MIGRATE_ON_START,
      TOLLGATE_DATABASE_URL: url,
      TOLLGATE_DATA_DIR: path.join(dir ?? '', name),
      TOLLGATE_CONFIG: writeConfig(dir ?? ''),
    });
    const refused = await startExpectingRefusal(env('a'));
    expect(refused.code).toBe(1);
    expect(refused.lines).toHaveLength(1);
    expect(refused.lines[0]).toContain(`1 migration pending (${NEWEST})`);

    const migrated = await tollgate(env('a'), 'migrate');
    expect(migrated.code).toBe(0);
    expect(await appliedMigrations(url)).toEqual(MIGRATIONS);

    // Two instances serve; each is replaced in turn (SIGTERM drains it) while the other serves.
    let a = await startGatewayProcess(env('a'));
    let b = await startGatewayProcess(env('b'));
    gateways.push(a, b);
    const { key } = await a.account(1_000);
    const statuses: number[] = [];
    const serve = async (gateway: GatewayProcess) => {
      for (let index = 0; index < 5; index += 1)
        statuses.push(await gateway.embed(key, `rolling ${statuses.length}`));
    };
    await serve(a);
    await a.stop();
    await serve(b);
    a = await startGatewayProcess(env('a'));
    gateways.push(a);
    await serve(a);
    await b.stop();
    await serve(a);
    b = await startGatewayProcess(env('b'));
    gateways.push(b);
    await serve(b);
    expect(statuses).toEqual(Array.from({ length: 25 }, () => 200));
    const accounts = await queryPostgres<{ balance: string }>(
      url,
      'select balance::text from accounts',
    );
    // Each request costs 1 micro-yuan (writeConfig): charged once each, whichever instance served.
    expect(accounts.map((row) => Number(row.balance))).toEqual([1_000 - 25]);
    expect((await tollgate(env('a'), 'ledger', 'check')).code).toBe(0);
  }, 180_000);
});

describe('TOLLGATE_MIGRATE_ON_START', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('defaults to on for SQLite (the quick start) and off for PostgreSQL, and takes 1/0/true/false only', () => {
    expect(loadSettings({}).migrateOnStart).toBe(true);
    expect(loadSettings({ TOLLGATE_DATABASE_URL: 'sqlite:/tmp/x.sqlite' }).migrateOnStart).toBe(
      true,
    );
    expect(
      loadSettings({ TOLLGATE_DATABASE_URL: 'postgres://db.internal/tollgate' }).migrateOnStart,
    ).toBe(false);
    expect(
      loadSettings({
        TOLLGATE_DATABASE_URL: 'postgres://db.internal/tollgate',
        TOLLGATE_MIGRATE_ON_START: 'true',
      }).migrateOnStart,
    ).toBe(true);
    expect(loadSettings({ TOLLGATE_MIGRATE_ON_START: '0' }).migrateOnStart).toBe(false);
    expect(() => loadSettings({ TOLLGATE_MIGRATE_ON_START: 'yes' })).toThrow(
      'invalid environment variable TOLLGATE_MIGRATE_ON_START: must be 1 or 0 (true or false)',
    );
  });

  it('set to 0, a SQLite gateway on a fresh data directory refuses instead of creating the schema', async () => {
    requireBuild();
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-migrate-off-'));
    const refused = await startExpectingRefusal({
      TOLLGATE_DATA_DIR: dir,
      TOLLGATE_DATABASE_URL: '',
      TOLLGATE_MIGRATE_ON_START: '0',
    });
    expect(refused.code).toBe(1);
    expect(refused.lines).toHaveLength(1);
    expect(refused.lines[0]).toMatch(/^tollgate: the database schema is behind this version: /);
  }, 60_000);
});
