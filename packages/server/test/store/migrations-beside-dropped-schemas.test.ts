import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { expect, it } from 'vitest';
import { openStore } from '../../src/store/database.js';
import { describeOnPostgres, dropSchema, type TestDialect } from '../helpers/dialects.js';

/**
 * Kysely's migrator looks for its tables by scanning every schema of the database with
 * has_schema_privilege() by name: a schema that another instance (or test) dropped during that
 * scan failed the migration with `schema "t_…" does not exist` — a start-up failure caused by
 * someone else's schema (seen in CI, where test suites create and drop schemas all the time).
 * Opening a store now survives other schemas coming and going around it.
 */
describeOnPostgres(
  'migrations beside schemas that come and go on $name',
  (dialect: TestDialect) => {
    it('opens every store while other schemas with tables are created and dropped', async () => {
      const { databaseUrl } = dialect.fresh();
      const churn = new pg.Client({ connectionString: databaseUrl });
      await churn.connect();
      let churning = true;
      const churner = (async () => {
        while (churning) {
          const other = `churn_${randomBytes(6).toString('hex')}`;
          await churn.query(
            `create schema ${other}; create table ${other}.a (x int, y int, z int); create table ${other}.b (x int)`,
          );
          await churn.query(`drop schema ${other} cascade`);
        }
      })();
      const opened: string[] = [];
      try {
        for (let index = 0; index < 12; index += 1) {
          const schema = `t_${randomBytes(6).toString('hex')}`;
          try {
            const store = await openStore({ url: databaseUrl, postgresSchema: schema });
            await store.close();
            opened.push(schema);
          } finally {
            await dropSchema(schema);
          }
        }
      } finally {
        churning = false;
        await churner;
        await churn.end();
      }
      expect(opened).toHaveLength(12);
    }, 120_000);
  },
);
