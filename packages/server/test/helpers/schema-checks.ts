import { Migrator, sql, type Kysely } from 'kysely';
import type { Store } from '../../src/store/database.js';
import { migrationProvider } from '../../src/store/migrations/index.js';
import type { Database } from '../../src/store/schema.js';

/** A Migrator of this store's own schema, for tests that migrate down and up again. */
export async function migratorOf(store: Store): Promise<Migrator> {
  const schema =
    store.dialect === 'postgres'
      ? (await sql<{ name: string }>`select current_schema() as name`.execute(store.db)).rows[0]
          ?.name
      : undefined;
  return new Migrator({
    // Its own schema's tables only (another suite may drop its schema meanwhile).
    db: store.migrationDb ?? store.db,
    provider: migrationProvider,
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });
}

/** SQLite's plan of a query, its steps' details one per line (`explain query plan`). */
export async function sqlitePlanOf(
  db: Kysely<Database>,
  query: { compile(): { sql: string } },
): Promise<string> {
  const rows = await sql<{
    detail: string;
  }>`explain query plan ${sql.raw(query.compile().sql)}`.execute(db.withoutPlugins());
  return rows.rows.map((row) => row.detail).join('\n');
}
