import { existsSync, linkSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadSettings, type Settings } from '../config/load.js';
import { ApiError } from '../errors/api-error.js';
import { SHARE_LINK_SECRET_FILE } from '../shares/share-link-secret.js';
import { defaultDatabaseUrl } from '../services.js';
import { databaseTarget } from '../startup/database-target.js';
import { SqliteDatabase } from '../store/sqlite-binding.js';

/** What `tollgate backup` prints once the copy is complete and checked. */
export interface BackupReport {
  readonly object: 'backup';
  /** The live database that was copied. */
  readonly source: string;
  /** The copy: one self-contained SQLite file (rollback journal, no -wal/-shm beside it). */
  readonly file: string;
  readonly bytes: number;
  /** The newest migration the copy records: the schema a restore brings back. */
  readonly schema: string | null;
  /** SQLite's `integrity_check` of the copy. */
  readonly integrity: 'ok';
  /**
   * What a restore also needs that the database copy does not hold, as found in the data
   * directory: the share-link secret (without it a restored gateway shows `null` for every
   * public link of a console share: docs/shares.md) and the local asset files. Kept out of the
   * copy on purpose (the database alone opens no share); copy them beside it.
   */
  readonly also_copy: readonly string[];
}

/**
 * `tollgate backup --to FILE`: a consistent copy of the SQLite database while the gateway keeps
 * serving from another process (docs/operations.md, "Backup and restore"). PostgreSQL is
 * refused: pg_dump does that job there. Refusals are `ApiError`s, printed by the CLI as
 * `{"error": …}` on stderr with exit 1, as every command's.
 */
export async function backupDatabase(
  to: string | boolean | undefined,
  env: NodeJS.ProcessEnv,
): Promise<BackupReport> {
  const settings = loadSettings(env);
  const target = databaseTarget(settings.databaseUrl ?? defaultDatabaseUrl(settings.dataDir));
  if (target.kind === 'postgres')
    throw new ApiError(
      'INVALID_INPUT',
      `tollgate backup copies a SQLite database, and this one is PostgreSQL (${target.database} ` +
        `at ${target.address}): back it up with pg_dump (docs/operations.md, "Backup and restore")`,
    );
  if (typeof to !== 'string' || to === '')
    throw new ApiError('INVALID_INPUT', '--to FILE is required: where to write the copy', 'to');
  const copied = await backupSqlite(target.file, path.resolve(to));
  return { ...copied, also_copy: outsideTheDatabase(settings) };
}

/**
 * The data directory's files a restore needs beside the database (docs/operations.md, "Backup
 * and restore"), those that exist: the share-link secret when the environment does not give it
 * (main.ts reads the file then), the asset files when storage is local.
 */
function outsideTheDatabase(settings: Settings): string[] {
  const found: string[] = [];
  const secret = path.join(settings.dataDir, SHARE_LINK_SECRET_FILE);
  if (settings.shareLinkSecret === undefined && existsSync(secret)) found.push(secret);
  const assets = path.join(settings.dataDir, 'assets');
  if (settings.config.storage.kind === 'local' && existsSync(assets)) found.push(assets);
  return found.map((file) => path.resolve(file));
}

/**
 * SQLite's online backup API (better-sqlite3's `db.backup`), from this process's own
 * connection. Why it is safe beside a serving gateway:
 * - it reads committed pages only: the gateway's group commit (store/sqlite-group-commit.ts)
 *   keeps its shared transaction open across an event-loop turn, and none of its writes is seen
 *   until that COMMIT, so the copy never holds half a group;
 * - every page is copied in ONE step, i.e. inside one WAL read transaction: a consistent
 *   snapshot that does not block the gateway's writers (WAL readers never do) nor its PASSIVE
 *   checkpoints beyond the snapshot. The default (100 pages a step, the lock released between
 *   steps) restarts from the first page each time another connection writes between two steps
 *   (SQLite's documentation of sqlite3_backup_step): under steady traffic it might never finish;
 * - the copy is written beside FILE under a temporary name and linked to FILE only once complete
 *   and checked, so FILE is never a partial database and never replaces another file.
 */
export async function backupSqlite(
  source: string,
  file: string,
): Promise<Omit<BackupReport, 'also_copy'>> {
  if (!existsSync(source))
    throw new ApiError(
      'NOT_FOUND',
      `no SQLite database at ${source} (TOLLGATE_DATA_DIR, TOLLGATE_DATABASE_URL)`,
    );
  if (existsSync(file))
    throw new ApiError('INVALID_INPUT', `${file} already exists: name a new file`, 'to');
  if (!existsSync(path.dirname(file)))
    throw new ApiError('INVALID_INPUT', `the directory of ${file} does not exist`, 'to');
  const partial = `${file}.partial-${process.pid}`;
  const live = new SqliteDatabase(source, { fileMustExist: true });
  try {
    live.pragma('busy_timeout = 5000');
    await live.backup(partial, { progress: () => ALL_PAGES });
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  } finally {
    live.close();
  }
  try {
    const checked = checkCopy(partial);
    // A link, not a rename: it fails (EEXIST) rather than replace a FILE created meanwhile.
    linkSync(partial, file);
    return { object: 'backup', source, file, bytes: statSync(file).size, ...checked };
  } finally {
    for (const leftover of [partial, `${partial}-wal`, `${partial}-shm`])
      rmSync(leftover, { force: true });
  }
}

/** The most pages `sqlite3_backup_step` takes at once (better-sqlite3's bound): all of them. */
const ALL_PAGES = 0x7fffffff;

/** Makes the copy one self-contained file and checks it; throws if SQLite finds it damaged. */
function checkCopy(file: string): { schema: string | null; integrity: 'ok' } {
  const copy = new SqliteDatabase(file, { fileMustExist: true });
  try {
    // The copy inherits WAL mode from the live file; a backup should not need its sidecars.
    copy.pragma('journal_mode = DELETE');
    const integrity = copy.pragma('integrity_check', { simple: true });
    if (integrity !== 'ok')
      throw new Error(`the copy failed SQLite's integrity check: ${String(integrity)}`);
    const migrated = copy
      .prepare(`select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'`)
      .get();
    const newest =
      migrated === undefined
        ? undefined
        : (copy
            .prepare(`select name from kysely_migration order by name desc limit 1`)
            .pluck()
            .get() as string | undefined);
    return { schema: newest ?? null, integrity: 'ok' };
  } finally {
    copy.close();
  }
}
