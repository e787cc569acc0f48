import { sql, type Kysely, type Selectable } from 'kysely';
import type { DialectName } from '../store/dialect-name.js';
import type { Database, EventTable } from '../store/schema.js';
import type { Clock } from '../util/effects.js';

/**
 * An event as the projector hands it to its applier: the row of `events`, with `xid` (the
 * writing transaction's id, PostgreSQL only) as text.
 */
export interface LoggedEvent {
  readonly seq: number;
  readonly xid: string | null;
  readonly requestId: string;
  readonly kind: string;
  readonly accountId: string;
  readonly keyId: string | null;
  readonly idempotencyKey: string | null;
  readonly amount: number | null;
  readonly released: number | null;
  readonly payload: string | null;
  readonly createdAt: number;
}

/** Applies one batch, in order, in the projector's transaction (`trx`): all of it or nothing. */
export type ApplyEvents = (trx: Kysely<Database>, events: readonly LoggedEvent[]) => Promise<void>;

export interface ProjectorOptions {
  /** The cursor's name: one per read model. */
  readonly name: string;
  readonly dialect: DialectName;
  readonly apply: ApplyEvents;
  readonly clock: Clock;
  /** Most events per batch (one transaction): what bounds how long it holds the writers. */
  readonly batchSize?: number;
}

/** How far the projector has applied the log: a sequence, and on PostgreSQL a transaction id. */
interface Cursor {
  readonly seq: number;
  readonly xid: string;
}

const DEFAULT_BATCH_SIZE = 256;

/**
 * Builds a read model from the event log (docs/decisions/0019-hot-path-event-log.md). Its contract:
 *
 * - **In order, exactly once.** A batch is read after the cursor, applied and the cursor moved in
 *   one transaction, so a batch that fails or a process killed part-way leaves the read model and
 *   the cursor as they were, and the next batch starts where the last committed one ended.
 * - **Never past an event it has not seen.** On SQLite writers are serialised, so the sequence is
 *   the commit order. On PostgreSQL it is not: a transaction may take a sequence and commit after
 *   another took a larger one. So the projector takes its snapshot's xmin first (every transaction
 *   below it has ended, every later one gets a larger id) and reads only events of transactions
 *   below it, in `(xid, seq)` order: nothing it has not applied can ever sort before its cursor.
 *   The price: the read model stands still while any transaction that took an id is open on the
 *   server (decision 0019, "PostgreSQL").
 * - **One at a time.** The cursor row is read `for update` on PostgreSQL (a second instance's
 *   projector waits, then reads the moved cursor) and inside SQLite's write transaction; its move
 *   is a compare-and-set all the same.
 * - **Bounded in time.** A batch is at most `batchSize` events; `catchUp` applies batches until the
 *   log is drained or its time budget is spent, and leaves the rest to its next call.
 */
export class Projector {
  readonly #batchSize: number;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: ProjectorOptions,
  ) {
    this.#batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  }

  /** Applies one batch; resolves with how many events it applied (0: nothing to apply now). */
  async applyBatch(): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const postgres = this.options.dialect === 'postgres';
      // The xmin first: everything read below it is final (see the class comment).
      const xmin = postgres
        ? (
            await sql<{
              xmin: string;
            }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(trx)
          ).rows[0]?.xmin
        : undefined;
      const cursor = await this.#cursor(trx, postgres);
      const events = postgres
        ? await this.#readPostgres(trx, cursor, xmin ?? '0')
        : await this.#readSqlite(trx, cursor);
      const last = events.at(-1);
      if (last === undefined) return 0;
      await this.options.apply(trx, events);
      const moved = await trx
        .updateTable('projector_cursors')
        .set({ seq: last.seq, xid: postgres ? last.xid : null })
        .where('name', '=', this.options.name)
        .where('seq', '=', cursor.seq)
        .executeTakeFirst();
      if (moved.numUpdatedRows !== 1n)
        throw new Error(`projector ${this.options.name}: its cursor was moved by another`);
      return events.length;
    });
  }

  /**
   * Applies batches until the log is drained or `budgetMs` has passed (at least one batch);
   * resolves with how many events it applied.
   */
  async catchUp(budgetMs = Number.POSITIVE_INFINITY): Promise<number> {
    const started = this.options.clock.now();
    let applied = 0;
    for (;;) {
      const count = await this.applyBatch();
      applied += count;
      if (count === 0 || this.options.clock.now() - started >= budgetMs) return applied;
    }
  }

  /** The cursor; its row is made by the first batch of a read model, not written by every one. */
  async #cursor(trx: Kysely<Database>, postgres: boolean): Promise<Cursor> {
    const read = () => {
      let query = trx
        .selectFrom('projector_cursors')
        .select(['seq', 'xid'])
        .where('name', '=', this.options.name);
      if (postgres) query = query.forUpdate();
      return query.executeTakeFirst();
    };
    let row = await read();
    if (row === undefined) {
      // Another instance's projector may make it at the same moment: then its row is read.
      await trx
        .insertInto('projector_cursors')
        .values({ name: this.options.name, seq: 0, xid: postgres ? '0' : null })
        .onConflict((conflict) => conflict.column('name').doNothing())
        .execute();
      row = await read();
    }
    if (row === undefined) throw new Error(`projector ${this.options.name}: no cursor row`);
    return { seq: Number(row.seq), xid: row.xid ?? '0' };
  }

  async #readSqlite(trx: Kysely<Database>, cursor: Cursor): Promise<LoggedEvent[]> {
    const rows = await trx
      .selectFrom('events')
      .selectAll()
      .where('seq', '>', cursor.seq)
      .orderBy('seq')
      .limit(this.#batchSize)
      .execute();
    return rows.map((row) => loggedEvent(row, null));
  }

  async #readPostgres(trx: Kysely<Database>, cursor: Cursor, xmin: string): Promise<LoggedEvent[]> {
    const { rows } = await sql<EventRow & { xid: string }>`
      select seq, xid::text as xid, request_id, kind, account_id, key_id, idempotency_key, amount,
             released, payload, created_at
        from events
       where (xid, seq) > (${cursor.xid}::xid8, ${cursor.seq}::bigint) and xid < ${xmin}::xid8
       order by xid, seq
       limit ${this.#batchSize}`.execute(trx);
    return rows.map((row) => loggedEvent(row, row.xid));
  }
}

/** A row of `events` as read (its sequence assigned). */
export type EventRow = Selectable<EventTable>;

/** A row of `events` as the projector hands it over; `xid` on PostgreSQL only. */
export function loggedEvent(row: EventRow, xid: string | null = null): LoggedEvent {
  return {
    seq: Number(row.seq),
    xid,
    requestId: row.request_id,
    kind: row.kind,
    accountId: row.account_id,
    keyId: row.key_id,
    idempotencyKey: row.idempotency_key,
    amount: row.amount === null ? null : Number(row.amount),
    released: row.released === null ? null : Number(row.released),
    payload: row.payload,
    createdAt: Number(row.created_at),
  };
}
