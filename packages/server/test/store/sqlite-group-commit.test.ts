import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CompiledQuery, Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../src/store/sqlite-binding.js';
import {
  GroupCommitSqliteDialect,
  GroupCommitSqliteDriver,
} from '../../src/store/sqlite-group-commit.js';

interface Tables {
  items: { id: string };
  children: { id: string; parent: string };
}

/**
 * The group-commit driver on a real SQLite file, watched through a second connection (what
 * another process would see: only committed data). A wrapper around the connection counts
 * COMMITs and can make a statement fail the way a full disk does (SQLite rolls the whole
 * transaction back by itself).
 */
describe('SQLite group commit', () => {
  let dir: string;
  let database: SqliteDatabase;
  let observer: SqliteDatabase;
  let db: Kysely<Tables>;
  let commits: number;
  /** The connection the driver under test uses (COMMITs counted, disk-full on demand). */
  let connection: SqliteDatabase;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-group-commit-'));
    const file = path.join(dir, 'test.db');
    database = new SqliteDatabase(file);
    database.pragma('journal_mode = WAL');
    database.pragma('foreign_keys = ON');
    commits = 0;
    const prepare = database.prepare.bind(database);
    const failing = {
      reader: false,
      run: () => {
        prepare('rollback').run();
        throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      },
    };
    const wrapped = new Proxy(database, {
      get(target, property) {
        if (property === 'prepare') {
          return (source: string) => {
            if (source === 'commit') commits += 1;
            if (source.includes('simulate_disk_full')) return failing;
            return prepare(source);
          };
        }
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
    connection = wrapped;
    db = new Kysely<Tables>({ dialect: new GroupCommitSqliteDialect(wrapped) });
    await sql`create table items (id text primary key)`.execute(db);
    await sql`create table children (id text primary key, parent text not null references items (id) deferrable initially deferred)`.execute(
      db,
    );
    observer = new SqliteDatabase(file, { readonly: true });
  });

  afterEach(async () => {
    observer.close();
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const committedItems = () =>
    (observer.prepare('select id from items order by id').all() as { id: string }[]).map(
      (row) => row.id,
    );
  const insertItem = (id: string) =>
    db.transaction().execute(async (trx) => {
      await trx.insertInto('items').values({ id }).execute();
      return id;
    });

  it('answers each of many concurrent transactions only once it is committed, with one COMMIT for all', async () => {
    const ids = Array.from({ length: 20 }, (_, index) => `item-${String(index).padStart(2, '0')}`);
    const seenAtAnswer = await Promise.all(
      ids.map((id) => insertItem(id).then(() => committedItems().includes(id))),
    );
    expect(seenAtAnswer).toEqual(ids.map(() => true));
    expect(committedItems()).toEqual(ids);
    expect(commits).toBe(1);
  });

  it('undoes a failing transaction alone: the others of its group persist', async () => {
    const results = await Promise.allSettled([
      insertItem('a'),
      db.transaction().execute(async (trx) => {
        await trx.insertInto('items').values({ id: 'b' }).execute();
        throw new Error('business rule refused b');
      }),
      insertItem('c'),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(committedItems()).toEqual(['a', 'c']);
    expect(commits).toBe(1);
  });

  it('answers a plain read that saw uncommitted writes only after they are committed', async () => {
    const write = insertItem('x');
    const read = db
      .selectFrom('items')
      .select('id')
      .execute()
      .then((rows) => ({ rows: rows.map((row) => row.id), committed: committedItems() }));
    const [, seen] = await Promise.all([write, read]);
    expect(seen.rows).toEqual(['x']);
    expect(seen.committed).toEqual(['x']);
  });

  it('fails every transaction of a group whose COMMIT fails, and keeps none of their writes', async () => {
    const results = await Promise.allSettled([
      insertItem('kept-if-alone'),
      db.transaction().execute(async (trx) => {
        await trx.insertInto('children').values({ id: 'orphan', parent: 'missing' }).execute();
      }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/);
    expect(committedItems()).toEqual([]);
    // The connection is usable again: the next group commits.
    await insertItem('after');
    expect(committedItems()).toEqual(['after']);
  });

  it('fails the waiting transactions when SQLite rolls the group back, and never lets one go on in autocommit', async () => {
    let continuedAfterRollback: unknown;
    const results = await Promise.allSettled([
      insertItem('waiting'),
      db.transaction().execute(async (trx) => {
        await trx.insertInto('items').values({ id: 'b1' }).execute();
        await sql`select 'simulate_disk_full'`.execute(trx).catch(() => undefined);
        try {
          await trx.insertInto('items').values({ id: 'b2' }).execute();
        } catch (error) {
          continuedAfterRollback = error;
          throw error;
        }
      }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/disk is full/);
    expect(String(continuedAfterRollback)).toMatch(/rolled back with its group/);
    expect(committedItems()).toEqual([]);
    await insertItem('after');
    expect(committedItems()).toEqual(['after']);
  });

  it('refuses a statement sent on a transaction after its rollback, before Kysely releases it', async () => {
    // A prepared statement goes to its transaction's connection directly (store/prepared-query.ts):
    // the lease itself must refuse what Kysely's executor would, or a late statement of a
    // rolled-back transaction would run, unguarded, in its group's shared transaction.
    const driver = new GroupCommitSqliteDriver(connection);
    const insert = (id: string) => CompiledQuery.raw(`insert into items (id) values ('${id}')`);
    const lease = await driver.acquireConnection();
    await driver.beginTransaction(lease, {});
    await lease.executeQuery(insert('rolled-back'));
    await driver.rollbackTransaction(lease);
    await expect(lease.executeQuery(insert('late'))).rejects.toThrow(/rolled back/);
    await driver.releaseConnection(lease);
    const next = await driver.acquireConnection();
    await driver.beginTransaction(next, {});
    await next.executeQuery(insert('after'));
    await driver.commitTransaction(next);
    await driver.releaseConnection(next);
    expect(committedItems()).toEqual(['after']);
  });
});
