import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { Projector, type ApplyEvents } from '../../src/events/projector.js';
import type { Store } from '../../src/store/database.js';
import type { Database } from '../../src/store/schema.js';
import { manualClock } from '../helpers/clock.js';
import { appendTestEvent } from '../helpers/events.js';
import {
  describeEachDialect,
  describeOnPostgres,
  openTestStore,
  postgresService,
  type TestDialect,
} from '../helpers/dialects.js';

/**
 * The event log's projector (events/projector.ts; decision 0019): every event applied once, in
 * order, the cursor moved with what it applied; a batch that fails part-way leaves nothing; on
 * PostgreSQL an event of a transaction still open holds back every later one, so that commits out
 * of sequence order are never stepped over.
 */

/** The read model of these tests: one row per applied event; a second apply breaks its key. */
async function createAppliedTable(db: Kysely<Database>): Promise<void> {
  await sql`create table projector_test_applied (seq bigint primary key, request_id text not null)`.execute(
    db,
  );
}

const applyIntoTable: ApplyEvents = async (trx, events) => {
  for (const event of events)
    await sql`insert into projector_test_applied (seq, request_id) values (${event.seq}, ${event.requestId})`.execute(
      trx,
    );
};

async function appliedSeqs(db: Kysely<Database>): Promise<number[]> {
  const { rows } = await sql<{
    seq: number;
  }>`select seq from projector_test_applied order by seq`.execute(db);
  return rows.map((row) => Number(row.seq));
}

/**
 * Waits until the first `count` events are below the server's xmin (PostgreSQL), so that the
 * projector may apply them: the xmin is the whole server's, and another test file's transaction,
 * open on the same server at that moment, holds every later event back (decision 0019, "the price
 * of the rule"). Nothing to wait for on SQLite.
 */
async function readableByTheProjector(store: Store, count: number): Promise<void> {
  if (store.dialect !== 'postgres') return;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { rows } = await sql<{ count: number }>`
      select count(*)::int as count from events
       where xid < pg_snapshot_xmin(pg_current_snapshot())`.execute(store.db);
    if ((rows[0]?.count ?? 0) >= count) return;
    if (Date.now() > deadline)
      throw new Error(`events not below the server's xmin after 60 s: a transaction is held open`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function projectorOf(
  store: Store,
  apply: ApplyEvents,
  options: { batchSize?: number; clock?: ReturnType<typeof manualClock> } = {},
): Projector {
  return new Projector(store.db, {
    name: 'test-read-model',
    dialect: store.dialect,
    apply,
    clock: options.clock ?? manualClock(),
    ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
  });
}

function withStore(dialect: TestDialect) {
  const opened: { store?: Store; close?: () => Promise<void> } = {};
  beforeEach(async () => {
    const { store, close } = await openTestStore(dialect);
    opened.store = store;
    opened.close = close;
    await createAppliedTable(store.db);
  });
  afterEach(async () => {
    await opened.close?.();
  });
  return () => {
    if (opened.store === undefined) throw new Error('no store');
    return opened.store;
  };
}

describeEachDialect('the projector applies each event once, in order, on $name', (dialect) => {
  const store = withStore(dialect);

  it('applies every event once across batches, and a restarted projector applies nothing again', async () => {
    const { db } = store();
    const appended: number[] = [];
    for (let index = 0; index < 10; index += 1)
      appended.push(await appendTestEvent(db, `req_${index}`));
    const batches: number[][] = [];
    const recording: ApplyEvents = async (trx, events) => {
      batches.push(events.map((event) => event.seq));
      await applyIntoTable(trx, events);
    };
    const projector = projectorOf(store(), recording, { batchSize: 3 });
    await readableByTheProjector(store(), 10);
    expect(await projector.catchUp()).toBe(10);
    expect(batches.map((batch) => batch.length)).toEqual([3, 3, 3, 1]);
    expect(batches.flat()).toEqual(appended);
    expect(await appliedSeqs(db)).toEqual(appended);
    // A new projector (a restart) reads the stored cursor: nothing is applied a second time.
    expect(await projectorOf(store(), recording).catchUp()).toBe(0);
    // And what is appended later is applied next, alone.
    const later = await appendTestEvent(db, 'req_later');
    await readableByTheProjector(store(), 11);
    expect(await projectorOf(store(), recording).catchUp()).toBe(1);
    expect(await appliedSeqs(db)).toEqual([...appended, later]);
  });

  it('a batch that fails part-way applies nothing and moves no cursor; the next run applies it whole', async () => {
    const { db } = store();
    const appended = [
      await appendTestEvent(db, 'req_a'),
      await appendTestEvent(db, 'req_b'),
      await appendTestEvent(db, 'req_c'),
    ];
    let failures = 1;
    const failingOnce: ApplyEvents = async (trx, events) => {
      await applyIntoTable(trx, events.slice(0, 2));
      if (failures > 0) {
        failures -= 1;
        throw new Error('the process died here');
      }
      await applyIntoTable(trx, events.slice(2));
    };
    const projector = projectorOf(store(), failingOnce);
    await readableByTheProjector(store(), 3);
    await expect(projector.applyBatch()).rejects.toThrow('the process died here');
    expect(await appliedSeqs(db)).toEqual([]);
    expect(await projector.catchUp()).toBe(3);
    expect(await appliedSeqs(db)).toEqual(appended);
  });

  it('stops when its time budget is spent and goes on from there at its next call', async () => {
    const { db } = store();
    for (let index = 0; index < 10; index += 1) await appendTestEvent(db, `req_${index}`);
    const clock = manualClock();
    // Each batch takes 10 ms of the projector's clock.
    const slow: ApplyEvents = async (trx, events) => {
      clock.advance(10);
      await applyIntoTable(trx, events);
    };
    const projector = projectorOf(store(), slow, { batchSize: 2, clock });
    await readableByTheProjector(store(), 10);
    expect(await projector.catchUp(25)).toBe(6);
    expect((await appliedSeqs(db)).length).toBe(6);
    expect(await projector.catchUp()).toBe(4);
    expect((await appliedSeqs(db)).length).toBe(10);
  });

  it('never hands out a sequence again once the newest events are deleted (the log is a queue)', async () => {
    const { db } = store();
    await appendTestEvent(db, 'req_1');
    const newest = await appendTestEvent(db, 'req_2');
    await readableByTheProjector(store(), 2);
    await projectorOf(store(), applyIntoTable).catchUp();
    await db.deleteFrom('events').execute();
    const next = await appendTestEvent(db, 'req_3');
    expect(next).toBeGreaterThan(newest);
    await readableByTheProjector(store(), 1);
    expect(await projectorOf(store(), applyIntoTable).catchUp()).toBe(1);
    expect(await appliedSeqs(db)).toContain(next);
  });

  it('refuses a second event of one kind for one request, and a second claim of one idempotency key', async () => {
    const { db } = store();
    await appendTestEvent(db, 'req_1', 'claim');
    await expect(appendTestEvent(db, 'req_1', 'claim')).rejects.toThrow();
    await appendTestEvent(db, 'req_1', 'money');
    await expect(appendTestEvent(db, 'req_1', 'money')).rejects.toThrow();
    // Another request claiming the same key and idempotency key (append uses `idem-<request>`).
    await expect(
      db
        .insertInto('events')
        .values({
          request_id: 'req_2',
          kind: 'claim',
          account_id: 'acct_1',
          key_id: 'key_1',
          idempotency_key: 'idem-req_1',
          amount: 1,
          released: null,
          payload: null,
          created_at: 1,
        })
        .execute(),
    ).rejects.toThrow();
    expect(await db.selectFrom('events').select('seq').execute()).toHaveLength(2);
  });
});

describeOnPostgres('commits out of sequence order on $name', (dialect) => {
  const store = withStore(dialect);

  /** A second session on the store's schema, for a transaction the test keeps open. */
  async function session(): Promise<pg.Client> {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(
      store().db,
    );
    const client = new pg.Client({ connectionString: postgresService.url });
    await client.connect();
    await client.query(`set search_path to ${rows[0]?.schema ?? 'public'}`);
    return client;
  }

  /** Applies until `count` events are in, or fails after a few seconds (xmin is the server's). */
  async function appliedUntil(projector: Projector, count: number): Promise<number[]> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      await projector.catchUp();
      const applied = await appliedSeqs(store().db);
      if (applied.length >= count || Date.now() > deadline) return applied;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('holds back an event committed first while an earlier-sequenced one is open, then applies both once, in order', async () => {
    const { db } = store();
    const seen: number[] = [];
    const recording: ApplyEvents = async (trx, events) => {
      seen.push(...events.map((event) => event.seq));
      await applyIntoTable(trx, events);
    };
    const projector = projectorOf(store(), recording);
    const open = await session();
    const rolledBack = await session();
    try {
      // A takes the lower sequence and stays open; B takes the next and commits first.
      await open.query('begin');
      const a = await open.query<{ seq: string }>(
        `insert into events (request_id, kind, account_id, created_at) values ('req_a', 'claim', 'acct_1', 1) returning seq`,
      );
      const aSeq = Number(a.rows[0]?.seq);
      const bSeq = await appendTestEvent(db, 'req_b');
      expect(bSeq).toBeGreaterThan(aSeq);
      // A reader by sequence would apply B now and step over A for good: this one applies nothing.
      expect(await projector.catchUp()).toBe(0);
      expect(seen).toEqual([]);
      // A transaction that rolls back in between leaves nothing to apply.
      await rolledBack.query('begin');
      await rolledBack.query(
        `insert into events (request_id, kind, account_id, created_at) values ('req_c', 'claim', 'acct_1', 1)`,
      );
      await rolledBack.query('rollback');
      await open.query('commit');
      expect(await appliedUntil(projector, 2)).toEqual([aSeq, bSeq]);
      expect(seen).toEqual([aSeq, bSeq]);
    } finally {
      await open.query('rollback').catch(() => undefined);
      await open.end();
      await rolledBack.end();
    }
  });
});
