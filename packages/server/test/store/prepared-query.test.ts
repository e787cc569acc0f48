import { SingleConnectionProvider, sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Store } from '../../src/store/database.js';
import type { Database } from '../../src/store/schema.js';
import { preparedQuery } from '../../src/store/prepared-query.js';
import {
  describeEachDialect,
  describeOnPostgres,
  dialects,
  openTestStore,
} from '../helpers/dialects.js';

const insertAccount = preparedQuery<{ id: string; email: string; balance: number }>((db, slot) =>
  db.insertInto('accounts').values({
    id: slot.id,
    email: slot.email,
    balance: slot.balance,
    held: 0,
    created_at: 1,
    budget_window_start: 0,
    budget_spent: 0,
    owed: 0,
  }),
);
const holdIfAvailable = preparedQuery<{ id: string; amount: number }, { held: number }>(
  (db, slot) =>
    db
      .updateTable('accounts')
      .set({ held: sql`held + ${slot.amount}` })
      .where('id', '=', slot.id)
      .where(sql<boolean>`balance - held >= ${slot.amount}`)
      .returning('held'),
);
const spreadsItsSlots = preparedQuery<{ id: string; email: string; balance: number }>((db, slot) =>
  db.insertInto('accounts').values({
    ...slot,
    held: 0,
    created_at: 1,
    budget_window_start: 0,
    budget_spent: 0,
    owed: 0,
  }),
);

describeEachDialect('prepared queries on $name', (dialect) => {
  let store: Store;
  let close: () => Promise<void>;
  beforeEach(async () => ({ store, close } = await openTestStore(dialect)));
  afterEach(() => close());

  it('runs with each call’s own values, inside and outside transactions', async () => {
    await insertAccount(store.db, { id: 'a1', email: 'a1@example.test', balance: 100 });
    await store.db
      .transaction()
      .execute((trx) => insertAccount(trx, { id: 'a2', email: 'a2@example.test', balance: 5 }));
    const first = await holdIfAvailable(store.db, { id: 'a1', amount: 60 });
    const refused = await holdIfAvailable(store.db, { id: 'a1', amount: 41 });
    const other = await holdIfAvailable(store.db, { id: 'a2', amount: 5 });
    expect(first.rows).toEqual([{ held: 60 }]);
    expect(refused.rows).toEqual([]);
    expect(other.rows).toEqual([{ held: 5 }]);
    const rows = await store.db
      .selectFrom('accounts')
      .select(['id', 'email', 'balance', 'held'])
      .orderBy('id')
      .execute();
    expect(rows).toEqual([
      { id: 'a1', email: 'a1@example.test', balance: 100, held: 60 },
      { id: 'a2', email: 'a2@example.test', balance: 5, held: 5 },
    ]);
  });

  it('refuses a missing value instead of binding it as NULL, and changes nothing', async () => {
    await expect(
      insertAccount(store.db, { id: 'a3', email: undefined as unknown as string, balance: 1 }),
    ).rejects.toThrow(/no value for email/);
    expect(await store.db.selectFrom('accounts').selectAll().execute()).toEqual([]);
  });

  it('refuses a statement sent on a transaction that has ended, and writes nothing', async () => {
    let ended: Kysely<Database> | undefined;
    await store.db.transaction().execute(async (trx) => {
      ended = trx;
      await insertAccount(trx, { id: 'a5', email: 'a5@example.test', balance: 1 });
    });
    // Another transaction holds the connection: the late statement must not run in it.
    await store.db.transaction().execute(async () => {
      await expect(
        insertAccount(ended!, { id: 'a6', email: 'a6@example.test', balance: 1 }),
      ).rejects.toThrow();
    });
    const ids = await store.db.selectFrom('accounts').select('id').execute();
    expect(ids).toEqual([{ id: 'a5' }]);
  });

  it('refuses a template that does not use every value (slots spread instead of named)', async () => {
    await expect(
      spreadsItsSlots(store.db, { id: 'a4', email: 'a4@example.test', balance: 1 }),
    ).rejects.toThrow(/does not use id, email, balance/);
    expect(await store.db.selectFrom('accounts').selectAll().execute()).toEqual([]);
  });
});

describeOnPostgres('prepared queries on $name connections', (dialect) => {
  let store: Store;
  let close: () => Promise<void>;
  beforeEach(async () => ({ store, close } = await openTestStore(dialect)));
  afterEach(() => close());

  it('is prepared by name once per PostgreSQL connection, and only the hot statements are', async () => {
    await store.db.transaction().execute(async (trx) => {
      await insertAccount(trx, { id: 'p1', email: 'p1@example.test', balance: 10 });
      await insertAccount(trx, { id: 'p2', email: 'p2@example.test', balance: 10 });
      // A text no prepared query has: test files share their worker (vitest.config.ts), and
      // named-statements-setting.test.ts prepares `select "id" from "accounts" where …`.
      await trx
        .selectFrom('accounts')
        .select('balance as not_a_hot_statement')
        .where('id', '=', 'p1')
        .execute();
      const prepared = await sql<{
        name: string;
        statement: string;
      }>`select name, statement from pg_prepared_statements`.execute(trx);
      const statements = prepared.rows.map((row) => row.statement);
      expect(statements.filter((text) => text.startsWith('insert into "accounts"'))).toHaveLength(
        1,
      );
      expect(statements.some((text) => text.includes('not_a_hot_statement'))).toBe(false);
    });
  });
});

/**
 * The hot path's cost: Kysely's executor builds an executor and a chain of promises for every
 * statement, more than SQLite takes to run one (bench/RESULTS.md, "Store path: fewer
 * statements"). In a SQLite transaction a prepared statement goes to the connection directly;
 * only the first finds the connection through Kysely.
 */
describe('prepared queries in a SQLite transaction', () => {
  const [sqlite] = dialects;
  let store: Store;
  let close: () => Promise<void>;
  beforeEach(async () => ({ store, close } = await openTestStore(sqlite!)));
  afterEach(() => close());

  it('run on the transaction’s connection without Kysely’s executor per statement', async () => {
    const throughKysely = vi.spyOn(SingleConnectionProvider.prototype, 'provideConnection');
    try {
      await store.db.transaction().execute(async (trx) => {
        await insertAccount(trx, { id: 's1', email: 's1@example.test', balance: 10 });
        await holdIfAvailable(trx, { id: 's1', amount: 4 });
        expect((await holdIfAvailable(trx, { id: 's1', amount: 5 })).rows).toEqual([{ held: 9 }]);
      });
      expect(throughKysely).toHaveBeenCalledTimes(1);
    } finally {
      throughKysely.mockRestore();
    }
    const rows = await store.db.selectFrom('accounts').select(['id', 'held']).execute();
    expect(rows).toEqual([{ id: 's1', held: 9 }]);
  });
});
