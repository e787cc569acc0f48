// The SQLite floors' tables (variants ordered-ids and random-ids): Tollgate's requests, holds and
// journal as migrated, the listing indexes, and the claim and finish that write them.
import { insufficient, priced } from './money.mjs';

export const TABLES = `
CREATE TABLE IF NOT EXISTS requests (id text primary key, key_id text not null, account_id text not null,
  idempotency_key text not null, fingerprint text not null, method text not null, path text not null, model text,
  status text not null, http_status integer, response_body text, error_code text, usage text, hold_id text,
  reserve_amount bigint, amount bigint, price_version text, pricing_rule text, upstream_request_id text,
  resolution text, created_at bigint not null, updated_at bigint not null, expires_at bigint not null,
  transcript text, usage_flag text, usage_reviewed_at bigint, usage_review text, task_id text, channel text,
  channel_attempts text, channel_cost bigint, unique (key_id, idempotency_key));
CREATE TABLE IF NOT EXISTS holds (id text primary key, account_id text not null references accounts (id),
  request_id text not null, amount bigint not null, state text not null, captured_amount bigint,
  price_version text not null, created_at bigint not null, resolved_at bigint, budget_key_id text,
  check (amount >= 0 and amount <= 1000000000000000)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS journal (id text primary key, account_id text not null references accounts (id),
  kind text not null, balance_delta bigint not null, held_delta bigint not null, hold_id text, request_id text,
  topup_id text, reason text not null, created_at bigint not null,
  check (balance_delta between -1000000000000000 and 1000000000000000)) WITHOUT ROWID;`;
// The indexes the rest of Tollgate reads (listings, retention, the sweeper, the resolution queue).
// FLOOR_INDEXES=none leaves them out: only what the money path itself needs (the primary keys and
// the idempotency key) — how much any schema could save.
export const LISTING_INDEXES = `
CREATE INDEX IF NOT EXISTS requests_expires on requests (expires_at);
CREATE INDEX IF NOT EXISTS requests_key_created on requests (key_id, created_at, id);
CREATE INDEX IF NOT EXISTS requests_account_created on requests (account_id, created_at, id);
CREATE INDEX IF NOT EXISTS requests_usage_flag on requests (usage_flag, usage_reviewed_at) where usage_flag is not null;
CREATE INDEX IF NOT EXISTS requests_processing on requests (updated_at) where status = 'processing';
CREATE INDEX IF NOT EXISTS requests_unresolved on requests (created_at, id) where status = 'submission_unknown';
CREATE UNIQUE INDEX IF NOT EXISTS holds_request on holds (request_id);
CREATE INDEX IF NOT EXISTS journal_account_created on journal (account_id, created_at);`;

/** Tollgate's tables: record, hold, two journal entries; ids from `newId(prefix)`. */
export function tableMoney(db, groupCommitted, newId) {
  const statements = {
    insertRecord:
      db.prepare(`insert into requests (id, key_id, account_id, idempotency_key, fingerprint, method, path,
      model, status, hold_id, reserve_amount, price_version, created_at, updated_at, expires_at)
      values (?, ?, ?, ?, ?, 'POST', ?, ?, 'processing', ?, ?, 'v1', ?, ?, ?)`),
    reserve: db.prepare('update accounts set held = held + ? where id = ? and balance - held >= ?'),
    insertHold:
      db.prepare(`insert into holds (id, account_id, request_id, amount, state, price_version, created_at)
      values (?, ?, ?, ?, 'open', 'v1', ?)`),
    journal:
      db.prepare(`insert into journal (id, account_id, kind, balance_delta, held_delta, hold_id, request_id,
      reason, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    capture: db.prepare(`update holds set state = 'captured', captured_amount = ?, resolved_at = ?
      where id = ? and state = 'open' and amount >= ?`),
    settle: db.prepare('update accounts set balance = balance - ?, held = held - ? where id = ?'),
    outcome:
      db.prepare(`update requests set status = 'succeeded', http_status = ?, response_body = ?, usage = ?,
      amount = ?, updated_at = ? where id = ? and status = 'processing'`),
  };
  return {
    claim(principal, idempotencyKey, fingerprint, url, model, reserve) {
      const now = Date.now();
      const ids = { request: newId('req'), hold: newId('hold') };
      return groupCommitted(() => {
        statements.insertRecord.run(
          ids.request,
          principal.keyId,
          principal.accountId,
          idempotencyKey,
          fingerprint,
          url,
          model,
          ids.hold,
          reserve,
          now,
          now,
          now + 30 * 86_400_000,
        );
        if (statements.reserve.run(reserve, principal.accountId, reserve).changes !== 1)
          throw insufficient();
        statements.insertHold.run(ids.hold, principal.accountId, ids.request, reserve, now);
        statements.journal.run(
          newId('jrn'),
          principal.accountId,
          'hold',
          0,
          reserve,
          ids.hold,
          ids.request,
          'reserve',
          now,
        );
        return ids;
      });
    },
    finish(principal, ids, reserve, usage, status, answer) {
      const amount = priced(usage, reserve);
      const now = Date.now();
      return groupCommitted(() => {
        if (statements.capture.run(amount, now, ids.hold, amount).changes !== 1)
          throw new Error('hold not open');
        statements.settle.run(amount, reserve, principal.accountId);
        statements.journal.run(
          newId('jrn'),
          principal.accountId,
          'capture',
          -amount,
          -reserve,
          ids.hold,
          ids.request,
          'capture',
          now,
        );
        statements.outcome.run(
          status,
          answer,
          JSON.stringify(usage ?? null),
          amount,
          now,
          ids.request,
        );
      });
    },
  };
}
