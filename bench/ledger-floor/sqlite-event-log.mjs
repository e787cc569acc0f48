// The SQLite floors' event log (event-log and the projected variants): the one append-only table of
// claim and finish events, and the claim and finish that append to it.
import { insufficient, priced } from './money.mjs';

// The event log: the sequence is the rowid (append-only, never deleted on the path). A claim row is
// the record and its hold (and the hold's journal entry: held + amount); a finish row is the
// outcome and the capture (and the capture's journal entry: balance − amount, held − released).
export const EVENT_LOG = `
CREATE TABLE IF NOT EXISTS events (seq integer primary key, kind text not null check (kind in ('claim', 'finish')),
  request_id text not null, account_id text not null, key_id text, idempotency_key text, fingerprint text,
  path text, model text, amount bigint not null check (amount between 0 and 1000000000000000),
  released bigint, status text, http_status integer, usage text, response_body text, created_at bigint not null);
CREATE UNIQUE INDEX IF NOT EXISTS events_claim_key on events (key_id, idempotency_key) where kind = 'claim';
CREATE UNIQUE INDEX IF NOT EXISTS events_request_kind on events (request_id, kind);`;

/** The one-table event log: a claim row and a finish row per request, two account updates. */
export function eventLogMoney(db, groupCommitted, newId) {
  const statements = {
    reserve: db.prepare('update accounts set held = held + ? where id = ? and balance - held >= ?'),
    claim:
      db.prepare(`insert into events (kind, request_id, account_id, key_id, idempotency_key, fingerprint, path,
      model, amount, created_at) values ('claim', ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    // Only from the request's claim, and within its hold; a second finish breaks the unique
    // (request_id, kind): captured once.
    finish:
      db.prepare(`insert into events (kind, request_id, account_id, amount, released, status, http_status,
      usage, response_body, created_at) select 'finish', request_id, account_id, ?, amount, 'succeeded', ?, ?, ?, ?
      from events where request_id = ? and kind = 'claim' and amount >= ?`),
    settle: db.prepare('update accounts set balance = balance - ?, held = held - ? where id = ?'),
  };
  return {
    claim(principal, idempotencyKey, fingerprint, url, model, reserve) {
      const now = Date.now();
      const ids = { request: newId('req') };
      return groupCommitted(() => {
        if (statements.reserve.run(reserve, principal.accountId, reserve).changes !== 1)
          throw insufficient();
        statements.claim.run(
          ids.request,
          principal.accountId,
          principal.keyId,
          idempotencyKey,
          fingerprint,
          url,
          model,
          reserve,
          now,
        );
        return ids;
      });
    },
    finish(principal, ids, reserve, usage, status, answer) {
      const amount = priced(usage, reserve);
      const now = Date.now();
      return groupCommitted(() => {
        const usageText = JSON.stringify(usage ?? null);
        if (
          statements.finish.run(amount, status, usageText, answer, now, ids.request, amount)
            .changes !== 1
        )
          throw new Error('no claim to finish');
        statements.settle.run(amount, reserve, principal.accountId);
      });
    },
  };
}
