import { expect, it } from 'vitest';
import { openStore } from '../../src/store/database.js';
import { describeOnPostgres, dropSchema, type TestDialect } from '../helpers/dialects.js';
import { withPostgres } from '../helpers/postgres-statement.js';
import { createMigratedSchema, schemasAreCopies } from '../helpers/schema-template.js';

/**
 * The PostgreSQL test schemas are copies of one migrated schema (helpers/schema-template.ts), not
 * migrated each: every test on PostgreSQL would run against something other than what
 * `tollgate migrate` builds if a copy lost a constraint, an index, a trigger or the migrator's
 * record of what it applied. This compares a copy with a schema migrated the real way, from the
 * catalog, with each schema's own name taken out.
 */
describeOnPostgres('test schemas copied from a migrated one on $name', (dialect: TestDialect) => {
  it('a copied schema has the migrated schema’s columns, constraints, indexes, triggers, functions and migration rows', async () => {
    const { databaseUrl } = dialect.fresh();
    const migrated = dialect.fresh().postgresSchema ?? '';
    const copied = dialect.fresh().postgresSchema ?? '';
    const store = await openStore({ url: databaseUrl, postgresSchema: migrated });
    await store.close();
    try {
      expect(await createMigratedSchema(databaseUrl, copied)).toBe(true);
      const [expected, actual] = [
        await catalogOf(databaseUrl, migrated),
        await catalogOf(databaseUrl, copied),
      ];
      expect(expected.columns.length).toBeGreaterThan(100);
      expect(expected.triggers.length).toBeGreaterThan(0);
      expect(expected.migrations.length).toBeGreaterThan(30);
      expect(actual).toEqual(expected);
      // A gateway opening the copy finds nothing to apply (the refusal would throw).
      const reopened = await openStore({
        url: databaseUrl,
        postgresSchema: copied,
        pendingMigrations: 'refuse',
      });
      await reopened.close();
    } finally {
      await dropSchema(migrated);
      await dropSchema(copied);
    }
  });

  it('under CI the test schemas are copies (pg_dump is there and accepts the server)', async () => {
    // Elsewhere a missing pg_dump only makes the suite slower: the gateways migrate themselves.
    const copies = await schemasAreCopies(dialect.fresh().databaseUrl);
    if (process.env['CI'] === 'true') expect(copies).toBe(true);
    else expect(typeof copies).toBe('boolean');
  });
});

interface Catalog {
  columns: string[];
  constraints: string[];
  indexes: string[];
  triggers: string[];
  functions: string[];
  migrations: string[];
}

async function catalogOf(databaseUrl: string, schema: string): Promise<Catalog> {
  return withPostgres(databaseUrl, async (client) => {
    const rows = async (text: string): Promise<string[]> =>
      (await client.query<{ line: string }>(text, [schema])).rows.map((row) =>
        row.line.replaceAll(schema, '<schema>'),
      );
    return {
      columns: await rows(
        `select concat_ws(' ', table_name, column_name, data_type, is_nullable, column_default) as line
         from information_schema.columns where table_schema = $1 order by table_name, column_name`,
      ),
      constraints: await rows(
        `select concat_ws(' ', c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)) as line
         from pg_constraint c join pg_namespace n on n.oid = c.connamespace
         where n.nspname = $1 order by 1`,
      ),
      indexes: await rows(
        `select indexdef as line from pg_indexes where schemaname = $1 order by indexname`,
      ),
      triggers: await rows(
        `select pg_get_triggerdef(t.oid) as line from pg_trigger t
         join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = $1 and not t.tgisinternal order by t.tgname`,
      ),
      functions: await rows(
        `select concat_ws(' ', p.proname, pg_get_function_arguments(p.oid), p.prosrc) as line
         from pg_proc p join pg_namespace n on n.oid = p.pronamespace
         where n.nspname = $1 order by p.proname`,
      ),
      migrations: await rows(
        `select name as line from ${schema}.kysely_migration where $1::text is not null order by name`,
      ),
    };
  });
}
