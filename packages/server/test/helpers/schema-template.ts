import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { openStore } from '../../src/store/database.js';
import { runOnPostgres } from './postgres-statement.js';

/**
 * PostgreSQL test schemas made from a copy of one migrated schema instead of by migrating each.
 *
 * A test gateway on PostgreSQL gets a schema of its own, and migrating one (every migration, in
 * the migrator's transaction) costs several times what creating the same tables from one script
 * does; about half the suite's tests run on PostgreSQL (docs/ci.md, "Where the time goes"). So
 * once per test process, a schema is migrated the real way (`openStore`), `pg_dump` writes it out
 * as SQL (its tables, indexes, constraints, functions, triggers and rows: the migrator's own
 * tables among them), and each later schema is that script run with the copy's name. A gateway
 * opening it finds every migration applied and migrates nothing.
 *
 * Where `pg_dump` is missing or refuses the server (another major version), schemas are migrated
 * as before: only slower. `schema-template.test.ts` proves a copy is the migrated schema, and
 * under CI that the copy is in use.
 */

/** The dumped schema with `TEMPLATE_NAME` where its name was, or undefined without `pg_dump`. */
let templateScript: Promise<string | undefined> | undefined;
const TEMPLATE_NAME = '__tollgate_test_template__';

/**
 * Creates `schema` in `databaseUrl` as the migrated schema; false when it could not (no
 * `pg_dump`), in which case the caller's gateway creates and migrates it itself.
 */
export async function createMigratedSchema(databaseUrl: string, schema: string): Promise<boolean> {
  const script = await templateFor(databaseUrl);
  if (script === undefined) return false;
  await runOnPostgres(databaseUrl, script.replaceAll(TEMPLATE_NAME, schema));
  return true;
}

/** Whether test schemas are copies in this process (false: `pg_dump` unavailable). */
export async function schemasAreCopies(databaseUrl: string): Promise<boolean> {
  return (await templateFor(databaseUrl)) !== undefined;
}

/** The process's template, made once; a failure to make it fails one test, the next tries again. */
function templateFor(databaseUrl: string): Promise<string | undefined> {
  templateScript ??= dumpMigratedSchema(databaseUrl).catch((error: unknown) => {
    templateScript = undefined;
    throw error;
  });
  return templateScript;
}

async function dumpMigratedSchema(databaseUrl: string): Promise<string | undefined> {
  const template = `t_template_${randomBytes(6).toString('hex')}`;
  const store = await openStore({ url: databaseUrl, postgresSchema: template });
  await store.close();
  try {
    const { stdout } = await promisify(execFile)(
      'pg_dump',
      [
        `--dbname=${databaseUrl}`,
        `--schema=${template}`,
        '--no-owner',
        '--no-privileges',
        // Rows as INSERT statements: the script runs as one query, where COPY FROM stdin cannot.
        '--inserts',
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    return (
      stdout
        .split('\n')
        // psql's own commands (`\restrict` in newer dumps) are not SQL.
        .filter((line) => !line.startsWith('\\'))
        .join('\n')
        .replaceAll(template, TEMPLATE_NAME)
    );
  } catch {
    return undefined;
  } finally {
    await runOnPostgres(databaseUrl, `drop schema if exists ${template} cascade`);
  }
}
