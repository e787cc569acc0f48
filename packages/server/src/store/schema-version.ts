import { sql, type Kysely } from 'kysely';
import type { DialectName } from './dialect-name.js';
import type { Database } from './schema.js';

/**
 * The database was migrated by a newer Tollgate: it holds migrations this binary does not have.
 * Running on it would mean reading and writing money tables whose shape this code does not know
 * (a new NOT NULL column, a new constraint, a moved invariant), so start-up stops instead. The
 * message names the unknown migrations and the two ways out (docs/operations.md, "Upgrade and
 * rollback").
 */
export class NewerSchemaError extends Error {
  override readonly name = 'NewerSchemaError';
  constructor(
    readonly unknownMigrations: readonly string[],
    readonly newestKnown: string,
  ) {
    super(
      `the database was migrated by a newer Tollgate: migration ${unknownMigrations.join(', ')} ` +
        `is unknown to this version (its newest is ${newestKnown}). Run the newer version, or ` +
        `restore the backup taken before the upgrade (docs/operations.md, "Upgrade and rollback")`,
    );
  }
}

/**
 * The database is behind this binary: migrations it has not applied yet, and this process was
 * told not to apply them itself (`TOLLGATE_MIGRATE_ON_START` off, the default on PostgreSQL, where
 * several instances share one database and a rolling upgrade must migrate once, first). The
 * message names what is pending and the two ways on (docs/deploy.md, "Migrations").
 */
export class PendingMigrationsError extends Error {
  override readonly name = 'PendingMigrationsError';
  constructor(readonly pendingMigrations: readonly string[]) {
    super(
      `the database schema is behind this version: ${pendingMigrations.length} migration` +
        `${pendingMigrations.length === 1 ? '' : 's'} pending (${describePending(pendingMigrations)}). ` +
        `Run \`tollgate migrate\` first, or set TOLLGATE_MIGRATE_ON_START=1 to let this process ` +
        `apply them (docs/deploy.md, "Migrations")`,
    );
  }
}

function describePending(names: readonly string[]): string {
  return names.length <= 2 ? names.join(', ') : `${names[0]} … ${names.at(-1)}`;
}

/** Kysely's record of applied migrations (its default table name). */
const MIGRATION_TABLE = 'kysely_migration';

/**
 * Reads the applied migrations once and judges them against `known`: throws `NewerSchemaError`
 * when the database records a migration this binary lacks (a fresh database, with no migration
 * table yet, passes), and, with `pending: 'refuse'`, `PendingMigrationsError` when `known` holds
 * migrations not applied yet. Returns the pending ones (to apply). Reads only: nothing is created
 * or locked. Runs before the migrator, whose own refusal of a newer schema ("corrupted
 * migrations: previously executed migration … is missing") reads like damage.
 */
export async function judgeSchemaVersion(
  db: Kysely<Database>,
  dialect: DialectName,
  schema: string | undefined,
  known: readonly string[],
  pending: 'apply' | 'refuse',
): Promise<string[]> {
  const applied = await appliedMigrations(db, dialect, schema);
  const knownNames = new Set(known);
  const unknown = applied.filter((name) => !knownNames.has(name));
  if (unknown.length > 0) throw new NewerSchemaError(unknown, [...known].sort().at(-1) ?? 'none');
  const appliedNames = new Set(applied);
  const notApplied = [...known].sort().filter((name) => !appliedNames.has(name));
  if (pending === 'refuse' && notApplied.length > 0) throw new PendingMigrationsError(notApplied);
  return notApplied;
}

/** The names Kysely recorded as applied, in name order; none before its table exists. */
async function appliedMigrations(
  db: Kysely<Database>,
  dialect: DialectName,
  schema: string | undefined,
): Promise<string[]> {
  if (!(await migrationTableExists(db, dialect, schema))) return [];
  const table =
    schema === undefined ? sql.table(MIGRATION_TABLE) : sql.table(`${schema}.${MIGRATION_TABLE}`);
  const applied = await sql<{ name: string }>`select name from ${table} order by name`.execute(db);
  return applied.rows.map((row) => row.name);
}

async function migrationTableExists(
  db: Kysely<Database>,
  dialect: DialectName,
  schema: string | undefined,
): Promise<boolean> {
  if (dialect === 'sqlite') {
    const found = await sql<{ name: string }>`
      select name from sqlite_master where type = 'table' and name = ${MIGRATION_TABLE}`.execute(
      db,
    );
    return found.rows.length > 0;
  }
  // Without a schema, the connection's search_path decides, as it does for the migrator.
  const qualified = schema === undefined ? MIGRATION_TABLE : `${schema}.${MIGRATION_TABLE}`;
  const found = await sql<{ oid: string | null }>`select to_regclass(${qualified}) as oid`.execute(
    db,
  );
  return found.rows[0]?.oid !== null && found.rows[0]?.oid !== undefined;
}
