import {
  PostgresDialect,
  PostgresIntrospector,
  sql,
  type DatabaseIntrospector,
  type Kysely,
  type PostgresDialectConfig,
  type TableMetadata,
} from 'kysely';

/**
 * The PostgreSQL dialect the migrator runs on. Kysely's own introspector lists the tables of
 * every schema of the database, calling has_schema_privilege() with each schema's name: a schema
 * that someone else drops during that scan (another deployment's, a test's) fails it with
 * `schema "…" does not exist`, and the migration — so the start-up — fails for a schema that
 * is not ours (store/migrations-beside-dropped-schemas.test.ts). The migrator only asks whether
 * its own two tables exist, so this introspector lists the tables of one schema, from the
 * catalog, by name, with no privilege function.
 */
export class MigrationPostgresDialect extends PostgresDialect {
  constructor(
    config: PostgresDialectConfig,
    /** The schema the migrations run in; `undefined`: the connection's current schema. */
    private readonly schema: string | undefined,
  ) {
    super(config);
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new OneSchemaIntrospector(db, this.schema);
  }
}

class OneSchemaIntrospector extends PostgresIntrospector {
  constructor(
    private readonly database: Kysely<unknown>,
    private readonly schema: string | undefined,
  ) {
    super(database);
  }

  override async getTables(): Promise<TableMetadata[]> {
    const schema = this.schema === undefined ? sql`current_schema()` : sql`${this.schema}`;
    const { rows } = await sql<{ name: string; schema: string }>`
      select c.relname as name, n.nspname as schema
        from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       where n.nspname = ${schema} and c.relkind in ('r', 'p')`.execute(this.database);
    return rows.map((row) => ({ name: row.name, schema: row.schema, isView: false, columns: [] }));
  }
}
