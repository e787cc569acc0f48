import path from 'node:path';
import { ConfigError } from '../config/load.js';

/**
 * Where the store lives, as an operator names it: the SQLite file, or the PostgreSQL server and
 * database. Never carries the password (it is dropped here), so it may be printed and logged.
 */
export type DatabaseTarget =
  | { readonly kind: 'sqlite'; readonly file: string }
  | {
      readonly kind: 'postgres';
      /** `host:port`, IPv6 hosts in brackets. */
      readonly address: string;
      readonly host: string;
      readonly port: number;
      readonly database: string;
      /** `undefined` when the URL names none (the driver then uses its own default). */
      readonly user: string | undefined;
    };

const POSTGRES_PORT = 5432;

/**
 * `url` as `services.ts` takes it: `postgres://…`, `sqlite:PATH`, or a plain SQLite path.
 * Throws a `ConfigError` for a PostgreSQL URL that does not parse.
 */
export function databaseTarget(url: string): DatabaseTarget {
  if (!url.startsWith('postgres')) {
    return { kind: 'sqlite', file: path.resolve(url.replace(/^sqlite:/, '')) };
  }
  if (!URL.canParse(url))
    throw new ConfigError('invalid environment variable TOLLGATE_DATABASE_URL: not a valid URL');
  const parsed = new URL(url);
  // `postgres:///db?host=/run/postgresql` names a Unix socket directory instead of a host.
  const host = parsed.hostname !== '' ? parsed.hostname : (parsed.searchParams.get('host') ?? '');
  const port = parsed.port === '' ? POSTGRES_PORT : Number(parsed.port);
  const user = parsed.username === '' ? undefined : decodeURIComponent(parsed.username);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  return {
    kind: 'postgres',
    address: `${host === '' ? 'localhost' : host}:${port}`,
    host: host === '' ? 'localhost' : host,
    port,
    // libpq and `pg` both fall back to the user name when the URL names no database.
    database: database !== '' ? database : (user ?? 'postgres'),
    user,
  };
}

/** One phrase for logs and the start-up summary: `PostgreSQL database tollgate on db:5432`. */
export function describeDatabase(target: DatabaseTarget): string {
  return target.kind === 'sqlite'
    ? `SQLite file ${target.file}`
    : `PostgreSQL database ${target.database} on ${target.address}` +
        (target.user === undefined ? '' : ` as ${target.user}`);
}
