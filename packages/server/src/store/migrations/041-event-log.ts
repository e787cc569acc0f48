import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * The accounted request path's event log (docs/decisions/0019-hot-path-event-log.md), its
 * groundwork only: the table, its indexes and the projector's cursors. Nothing writes events yet
 * (docs/event-log-cutover.md, slice 0); the projector that applies them is events/projector.ts.
 *
 * - `events`: one row per event, keyed by a sequence that is never reused. On SQLite that takes
 *   AUTOINCREMENT: applied events are deleted (the log is a queue), and a plain rowid would hand
 *   the deleted newest sequence out again, below the projector's cursor, where it would never be
 *   read. On PostgreSQL a sequence is never reused, but it is not commit-ordered: each event also
 *   keeps its transaction's id (`xid`), and the projector reads in `(xid, seq)` order below its
 *   snapshot's xmin (index `events_xid_seq`).
 * - `events_request_kind` (unique): at most one event of each kind per request, so that a money
 *   movement happens once whoever tries it; `events_claim_key` (unique, partial on claims): the
 *   idempotency decision, as `requests`' (key_id, idempotency_key) is today.
 * - `projector_cursors`: how far each projector has applied the log, written in the same
 *   transaction as what it applied (`xid` on PostgreSQL only).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const columns = sql`request_id text not null,
      kind text not null,
      account_id text not null,
      key_id text,
      idempotency_key text,
      amount bigint,
      released bigint,
      payload text,
      created_at bigint not null`;
  if (postgres) {
    await sql`create table events (
      seq bigserial primary key,
      xid xid8 not null default pg_current_xact_id(),
      ${columns})`.execute(db);
    await sql`create index events_xid_seq on events (xid, seq)`.execute(db);
  } else {
    await sql`create table events (seq integer primary key autoincrement, ${columns})`.execute(db);
  }
  await sql`create unique index events_request_kind on events (request_id, kind)`.execute(db);
  await sql`create unique index events_claim_key on events (key_id, idempotency_key)
    where kind = 'claim'`.execute(db);
  await db.schema
    .createTable('projector_cursors')
    .addColumn('name', 'text', (column) => column.primaryKey())
    .addColumn('seq', 'bigint', (column) => column.notNull())
    .addColumn('xid', 'text')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('projector_cursors').execute();
  await db.schema.dropTable('events').execute();
}
