import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Kysely, Migrator, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { classifyingOutages } from './database-outage.js';
import { MigrationPostgresDialect } from './migration-dialect.js';
import { migrationProvider } from './migrations/index.js';
import { SqliteDatabase, sqliteBindingPath } from './sqlite-binding.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import { judgeSchemaVersion } from './schema-version.js';
import { GroupCommitSqliteDialect } from './sqlite-group-commit.js';
import { statementNameOf } from './prepared-query.js';
import type { Database } from './schema.js';
import type { DialectName } from './dialect-name.js';

export type { DialectName } from './dialect-name.js';

export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: DialectName;
  /**
   * PostgreSQL: the same pool seen through a dialect whose introspection reads this store's
   * schema only (migration-dialect.ts); a Migrator must run on it, or another schema dropped
   * meanwhile fails it. Absent on SQLite (migrate on `db`).
   */
  readonly migrationDb?: Kysely<Database>;
  close(): Promise<void>;
}

export interface StoreOptions {
  /** `postgres://...` for PostgreSQL; otherwise the SQLite file path (`:memory:` for tests). */
  readonly url: string;
  /** PostgreSQL only: the schema to use (created if missing); tests isolate themselves with it. */
  readonly postgresSchema?: string;
  readonly postgresPoolSize?: number;
  /**
   * SQLite only: checkpoint the WAL from a worker thread (default true, what a serving gateway
   * wants). A short-lived process (a CLI command) leaves it to SQLite's own autocheckpoint and
   * does not pay for starting the thread.
   */
  readonly checkpointWorker?: boolean;
  /**
   * PostgreSQL only: told of each connection the server or the network dropped (a failover, a
   * restart, `pg_terminate_backend`, a proxy's idle timeout). The dead connection is already
   * out of the pool; the work on it failed with an error of its own.
   */
  readonly onConnectionLost?: (error: Error) => void;
  /**
   * PostgreSQL only: prepare the hot path's statements by name (default true); `false` for
   * PgBouncer in transaction pooling before 1.21 (configuration `postgres.named_statements`).
   */
  readonly namedStatements?: boolean;
  /**
   * What to do with migrations the database has not applied: `apply` them (under the
   * migrator's lock; the default, and what `tollgate migrate` does), or `refuse` to open with
   * `PendingMigrationsError` (a gateway whose `TOLLGATE_MIGRATE_ON_START` is off: docs/deploy.md).
   */
  readonly pendingMigrations?: 'apply' | 'refuse';
}

const INT8_OID = 20;
const UNIQUE_VIOLATION = '23505';
const CONNECT_TIMEOUT_MS = 5_000;

/** Opens the database, refusing a newer schema, and applies (or refuses) pending migrations. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const store: Store = options.url.startsWith('postgres')
    ? await openPostgres(options)
    : openSqlite(options.url, options.checkpointWorker ?? true);
  try {
    const known = Object.keys(await migrationProvider.getMigrations());
    const pending = await judgeSchemaVersion(
      store.db,
      store.dialect,
      options.postgresSchema,
      known,
      options.pendingMigrations ?? 'apply',
    );
    // A current schema (the usual start) needs no migrator, its lock or its reads; otherwise it
    // applies what is pending under its lock, judging again there (another instance may have).
    if (pending.length > 0) await migrate(store.migrationDb ?? store.db, options.postgresSchema);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

async function migrate(db: Kysely<Database>, schema: string | undefined): Promise<void> {
  // With a schema named, Kysely looks for its own tables there only; otherwise it may find
  // another schema's migration tables and skip creating its own.
  const migrator = new Migrator({
    db,
    provider: migrationProvider,
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error !== undefined || failed !== undefined) {
    // The cause lets start-up say what is wrong (server down, database missing): startup/.
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`, {
      cause: error,
    });
  }
}

function openSqlite(url: string, checkpointWorker: boolean): Store {
  const file = url.replace(/^sqlite:/, '');
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const database = new SqliteDatabase(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  // The default 2 MiB page cache makes every lookup in a grown database a read syscall.
  database.pragma('cache_size = -65536');
  database.pragma('mmap_size = 268435456');
  database.pragma('temp_store = MEMORY');
  const checkpointer =
    file === ':memory:' || !checkpointWorker
      ? undefined
      : startCheckpointer(path.resolve(file), sqliteBindingPath);
  if (checkpointer !== undefined) database.pragma('wal_autocheckpoint = 20000');
  cachePreparedStatements(database);
  const db = new Kysely<Database>({ dialect: new GroupCommitSqliteDialect(database) });
  return {
    db,
    dialect: 'sqlite',
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

async function openPostgres(
  options: StoreOptions,
): Promise<Store & { migrationDb: Kysely<Database> }> {
  // Loaded here, not at the top: a SQLite process (the embedded default, every CLI command on
  // it) never pays for importing the PostgreSQL driver.
  const { default: pg } = await import('pg');
  const schema = options.postgresSchema;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(schema))
    throw new Error(`bad schema name ${schema}`);
  if (schema !== undefined) {
    const client = new pg.Client({ connectionString: options.url });
    // A connection lost between these statements makes the next one fail; never the process.
    client.on('error', () => {});
    await client.connect();
    // Several instances starting together on a new schema: `if not exists` still races on the
    // catalog's unique index (23505) — the schema exists then, which is all this needs.
    await client.query(`create schema if not exists ${schema}`).catch((error: unknown) => {
      if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error;
    });
    await client.end();
  }
  const pool = new pg.Pool({
    connectionString: options.url,
    // Names the gateway's sessions in pg_stat_activity; `?application_name=` in the URL wins.
    application_name: 'tollgate',
    max: options.postgresPoolSize ?? 20,
    // An unreachable server fails a request (and `/readyz`) in seconds instead of hanging on
    // the operating system's connect timeout; TCP keep-alive finds peers that vanished silently.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
    // Amounts are bigint; every one is a safe integer, so parse them as numbers on this pool only.
    types: { getTypeParser: bigintAsNumber(pg.types) },
  });
  surviveConnectionLoss(pool, options.onConnectionLost ?? (() => {}));
  if (options.namedStatements ?? true) prepareHotStatementsByName(pool);
  // Each error of a lost connection says what was committed (store/database-outage.ts).
  const db = new Kysely<Database>({ dialect: classifyingOutages(new PostgresDialect({ pool })) });
  // The migrations run on the same pool through a dialect whose introspection looks at one
  // schema only (store/migration-dialect.ts); never destroyed itself: that would end the pool.
  const migrationDb = new Kysely<Database>({
    dialect: new MigrationPostgresDialect({ pool }, schema),
  });
  return { db, migrationDb, dialect: 'postgres', close: () => db.destroy() };
}

/**
 * `pg` reports a connection that died (server restart, failover, `pg_terminate_backend`, a
 * proxy closing it) as an `'error'` event: on the pool for an idle connection, on the client
 * for one checked out. An `'error'` event nobody listens to ends the Node process, so without
 * these listeners one killed connection would take the gateway down. With them, the pool drops
 * the dead connection (pg-pool removes an idle one itself, and one released by Kysely is
 * discarded as no longer queryable), the statement that ran on it fails with what it committed
 * (store/database-outage.ts: the answer then says to send the request again, or to read its
 * record first), and the next checkout opens a fresh connection once the server answers again.
 */
function surviveConnectionLoss(pool: pg.Pool, onConnectionLost: (error: Error) => void): void {
  // The pool re-emits an idle client's error, which the client's own listener already reported.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', (error) => onConnectionLost(error));
  });
}

/**
 * PostgreSQL parses and plans an unnamed statement on every run. The hot path's statements
 * (store/prepared-query.ts) are sent by name instead, so each connection prepares each of them
 * once (`pg` remembers what a connection has prepared): +15% accounted requests/s on one account,
 * +28% over 64 (bench/RESULTS.md). Only those: their texts are a fixed set, list their columns
 * (no `select *` whose result type a migration could change under a prepared plan), and so the
 * server's per-connection statement cache stays small. Kysely runs `client.query(text, values)`.
 */
function prepareHotStatementsByName(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    const byName = (text: unknown, values: unknown, ...rest: unknown[]) => {
      const name =
        typeof text === 'string' && Array.isArray(values) ? statementNameOf(text) : undefined;
      return name === undefined ? query(text, values, ...rest) : query({ name, text, values });
    };
    client.query = byName as typeof client.query;
  });
}

/** `pg`'s type parsers, with bigint (int8) parsed as a number. */
const bigintAsNumber = (types: typeof pg.types) =>
  ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID
      ? (value: string) => Number(value)
      : (types.getTypeParser(oid, format ?? 'text') as unknown)) as typeof pg.types.getTypeParser;

/**
 * Kysely prepares every query anew; preparing costs about as much as running a small statement.
 * The hot path uses a few dozen distinct SQL texts, so keep their statements (bounded, in case
 * some caller builds SQL with inlined values). A statement runs to completion synchronously
 * before the next one starts, so sharing one is safe.
 */
function cachePreparedStatements(database: SqliteDatabase): void {
  const prepare = database.prepare.bind(database);
  const cache = new Map<string, ReturnType<typeof prepare>>();
  database.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (statement === undefined) {
      statement = prepare(source);
      if (cache.size < 1_000) cache.set(source, statement);
    }
    return statement;
  }) as typeof database.prepare;
}
