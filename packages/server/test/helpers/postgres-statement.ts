import pg from 'pg';

/** Runs `text` (one statement, or a script of several) on a connection of its own, then closes it. */
export async function runOnPostgres(databaseUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
