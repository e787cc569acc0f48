import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Lends `work` a connection of its own to `databaseUrl`, closed afterwards whatever happens. An
 * `'error'` event (the server ending the session under a test that kills backends) is heard and
 * dropped: the statement in flight fails by itself, and an unheard event would end the process.
 */
export async function withPostgres<T>(
  databaseUrl: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Runs one statement with `values` on a connection of its own; its rows. */
export function queryPostgres<Row extends pg.QueryResultRow>(
  databaseUrl: string,
  text: string,
  values: readonly unknown[] = [],
): Promise<Row[]> {
  return withPostgres(
    databaseUrl,
    async (client) => (await client.query<Row>(text, [...values])).rows,
  );
}

/** Runs `text` (one statement, or a script of several) on a connection of its own, then closes it. */
export async function runOnPostgres(databaseUrl: string, text: string): Promise<void> {
  // Without values `pg` sends the simple protocol, which takes a script of several statements.
  await withPostgres(databaseUrl, (client) => client.query(text));
}

/** The URL of database `name` on the server `serverUrl` names. */
export function databaseUrlOf(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A new, empty database on the server `serverUrl` names, for a gateway process that must have a
 * database to itself (its migrations, its projector, its advisory locks); `drop` removes it even
 * with sessions still open.
 */
export async function createScratchDatabase(
  serverUrl: string,
  prefix: string,
): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await runOnPostgres(serverUrl, `create database ${name}`);
  return {
    name,
    url: databaseUrlOf(serverUrl, name),
    drop: () => runOnPostgres(serverUrl, `drop database if exists ${name} with (force)`),
  };
}
