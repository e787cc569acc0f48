import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/database.js';
import { preparedQuery } from '../../src/store/prepared-query.js';
import { describeOnPostgres, dropSchema } from '../helpers/dialects.js';

/** A hot-path style query: sent by name when named statements are on. */
const accountById = preparedQuery<{ id: string }, { id: string }>((db, slots) =>
  db.selectFrom('accounts').select('id').where('id', '=', slots.id),
);

/**
 * The risk: behind PgBouncer in transaction pooling (before 1.21) a statement prepared by name
 * on one server connection is missing on the next ("prepared statement … does not exist"), so
 * every hot-path request fails. `postgres.named_statements: false` must send nothing by name:
 * the one connection of the pool has prepared no statement after running the hot query.
 */
describeOnPostgres('postgres.named_statements', (dialect) => {
  let opened: { store: Store; schema: string | undefined } | undefined;
  afterEach(async () => {
    await opened?.store.close();
    await dropSchema(opened?.schema);
    opened = undefined;
  });

  async function preparedAfterHotQuery(namedStatements: boolean): Promise<number> {
    const fresh = dialect.fresh();
    const store = await openStore({
      url: fresh.databaseUrl,
      ...(fresh.postgresSchema === undefined ? {} : { postgresSchema: fresh.postgresSchema }),
      postgresPoolSize: 1,
      namedStatements,
    });
    opened = { store, schema: fresh.postgresSchema };
    await accountById(store.db, { id: 'acct_none' });
    await accountById(store.db, { id: 'acct_none' });
    const { rows } = await sql<{
      count: number;
    }>`select count(*)::int as count from pg_prepared_statements`.execute(store.db);
    return rows[0]?.count ?? -1;
  }

  it('on (the default): the hot query is prepared by name on its connection', async () => {
    expect(await preparedAfterHotQuery(true)).toBe(1);
  });

  it('off: nothing is prepared by name, the query still answers', async () => {
    expect(await preparedAfterHotQuery(false)).toBe(0);
  });
});
