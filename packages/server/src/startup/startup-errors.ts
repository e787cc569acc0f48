import path from 'node:path';
import { BudgetTimeZoneMismatch } from '../budgets/budget-time-zone.js';
import { ConfigError } from '../config/load.js';
import { NewerSchemaError, PendingMigrationsError } from '../store/schema-version.js';
import type { DatabaseTarget } from './database-target.js';

/**
 * Why the gateway could not start, already said for an operator: what is wrong and how to fix
 * it, on one line (a configuration file's problems: one header line and one line per problem).
 * `main.ts` prints the message and exits with 1; it never prints a stack trace for these.
 */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** The lines `main.ts` prints for any start-up failure, explained or not. */
export function startupFailureMessage(error: unknown): string {
  if (
    error instanceof ConfigError ||
    error instanceof StartupError ||
    error instanceof NewerSchemaError ||
    error instanceof PendingMigrationsError ||
    error instanceof BudgetTimeZoneMismatch
  )
    return error.message;
  return `could not start: ${firstLine(error)} (LOG_LEVEL=debug prints the stack trace)`;
}

/** `app.listen` failed: the address or port is taken, privileged or not this machine's. */
export function explainListenError(
  error: unknown,
  listen: { readonly host: string; readonly port: number },
): string {
  const where = `${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${listen.port}`;
  switch (codeOf(error)) {
    case 'EADDRINUSE':
      return (
        `cannot listen on ${where}: the port is already in use by another process ` +
        `(another Tollgate?). Stop it, or start on another port: PORT=${nextPort(listen.port)} npm start`
      );
    case 'EACCES':
      return (
        `cannot listen on ${where}: permission denied (ports below 1024 need privileges). ` +
        `Use a port from 1024 up, e.g. PORT=8080`
      );
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return (
        `cannot listen on ${where}: ${listen.host} is not an address of this machine. ` +
        `Set HOST to one of its addresses (127.0.0.1: this machine only; 0.0.0.0: every interface)`
      );
    default:
      return `cannot listen on ${where}: ${firstLine(error)}`;
  }
}

/**
 * Opening the store (or wiring the services around it) failed. The store's own errors come
 * wrapped (`database migration … failed`, with the driver's error as `cause`), so the whole
 * chain of causes is searched for the driver's code.
 */
export function explainServicesError(error: unknown, database: DatabaseTarget): string {
  const chain = causesOf(error);
  // Already said for an operator (store/schema-version.ts, budgets/budget-time-zone.ts),
  // whatever the dialect.
  const said = chain.find(
    (cause) =>
      cause instanceof NewerSchemaError ||
      cause instanceof PendingMigrationsError ||
      cause instanceof BudgetTimeZoneMismatch,
  );
  if (said !== undefined) return said.message;
  const explained =
    database.kind === 'postgres'
      ? postgresProblem(chain, database)
      : sqliteProblem(chain, database);
  return explained ?? `could not open the ${databaseName(database)}: ${firstLine(error)}`;
}

function postgresProblem(
  chain: readonly unknown[],
  database: Extract<DatabaseTarget, { kind: 'postgres' }>,
): string | undefined {
  const fix = 'check TOLLGATE_DATABASE_URL';
  for (const error of chain) {
    const code = codeOf(error);
    switch (code) {
      case 'ECONNREFUSED':
      case 'ETIMEDOUT':
      case 'EHOSTUNREACH':
      case 'ENETUNREACH':
        return (
          `cannot connect to PostgreSQL at ${database.address} (${code}): start the server ` +
          `(pg_isready -h ${database.host} -p ${database.port} tells when it accepts connections) or ${fix}`
        );
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return `cannot connect to PostgreSQL at ${database.address}: host ${database.host} is unknown; ${fix}`;
      // PostgreSQL's SQLSTATE codes: invalid_catalog_name, invalid_password, and
      // invalid_authorization_specification (unknown role, no pg_hba.conf entry).
      case '3D000':
        return (
          `PostgreSQL database ${database.database} does not exist on ${database.address}: ` +
          `create it (createdb -h ${database.host} -p ${database.port}` +
          `${database.user === undefined ? '' : ` -U ${database.user}`} ${database.database}) or ${fix}`
        );
      case '28P01':
      case '28000':
        return `PostgreSQL at ${database.address} refused the login: ${firstLine(error)}; check the user and password in TOLLGATE_DATABASE_URL`;
    }
  }
  return undefined;
}

function sqliteProblem(
  chain: readonly unknown[],
  database: Extract<DatabaseTarget, { kind: 'sqlite' }>,
): string | undefined {
  const directory = path.dirname(database.file);
  const writable = `set TOLLGATE_DATA_DIR to a directory this user can write`;
  for (const error of chain) {
    const message = firstLine(error);
    if (/bindings file|NODE_MODULE_VERSION|ERR_DLOPEN_FAILED/.test(`${codeOf(error)} ${message}`))
      return (
        `the SQLite module (better-sqlite3) is not built for Node.js ${process.versions.node}: ` +
        `install a C++ toolchain and python 3 (README, "Requirements"), then run npm ci again`
      );
    switch (codeOf(error)) {
      case 'EACCES':
      case 'EPERM':
      case 'EROFS':
        return `cannot create ${pathOf(error) ?? directory}: permission denied; ${writable}`;
      case 'ENOTDIR':
      case 'EEXIST':
        return `cannot use ${directory} as the data directory: a file is in the way; ${writable}`;
      case 'ENOSPC':
      case 'SQLITE_FULL':
        return `no space left for the SQLite file ${database.file}: free some space or set TOLLGATE_DATA_DIR elsewhere`;
      case 'SQLITE_CANTOPEN':
      case 'SQLITE_READONLY':
        return `cannot write the SQLite file ${database.file} (${codeOf(error)}): ${writable}`;
      case 'SQLITE_NOTADB':
      case 'SQLITE_CORRUPT':
        return `${database.file} is not a usable SQLite database (${codeOf(error)}): restore it from a backup, or set TOLLGATE_DATA_DIR to another directory`;
      case 'SQLITE_BUSY':
      case 'SQLITE_LOCKED':
        return `the SQLite file ${database.file} is locked by another process for too long: stop it, or set TOLLGATE_DATA_DIR to another directory`;
    }
  }
  return undefined;
}

function databaseName(database: DatabaseTarget): string {
  return database.kind === 'sqlite'
    ? `SQLite file ${database.file}`
    : `PostgreSQL database ${database.database} on ${database.address}`;
}

/** The error, its `cause`s, and the attempts of an `AggregateError` (one per address tried). */
function causesOf(error: unknown): unknown[] {
  const chain: unknown[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && chain.length < 20) {
    const next = queue.shift();
    if (next === undefined || next === null || chain.includes(next)) continue;
    chain.push(next);
    if (next instanceof AggregateError) queue.push(...(next.errors as unknown[]));
    if (next instanceof Error) queue.push(next.cause);
  }
  return chain;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function pathOf(error: unknown): string | undefined {
  const file = (error as { path?: unknown } | null)?.path;
  return typeof file === 'string' ? file : undefined;
}

/** Only the first line: some drivers' messages carry a whole report. */
function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]?.trim() ?? '';
}

function nextPort(port: number): number {
  return port === 0 || port >= 65_535 ? 8081 : port + 1;
}
