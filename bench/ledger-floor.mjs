#!/usr/bin/env node
// The floor of an accounted Node gateway on SQLite (issue 19): the harness's minimal JSON gateway
// (node:http + undici, anchors/node-proxy.mjs in ../shared/bench) plus the durable money that
// issue 19 says must be kept, and nothing else — no framework, no validation beyond a JSON parse,
// no limits, no logs, no metrics. It writes what Tollgate writes per request, on Tollgate's own
// SQLite tables and indexes (the schema below is Tollgate's as migrated for these four tables,
// with the money bounds abridged to one CHECK or trigger each):
//
//   claim, committed before the upstream call: the request record (unique key + idempotency key),
//     the guarded hold on the account (balance − held ≥ amount), the hold row, its journal entry;
//   finish, committed before the answer: the hold's capture, the account's balance and held, the
//     capture's journal entry, the record's outcome with the answer kept for a replay.
//
// Writes are group-committed as Tollgate's are (every claim or finish of one event-loop turn in
// one `BEGIN IMMEDIATE … COMMIT`, each in a savepoint), with WAL, `synchronous = NORMAL` and the
// PASSIVE checkpoint on a worker thread. So `bench/goals.sh` can show how much of Tollgate's CPU
// per request the durable money costs by itself and how much is the rest of the gateway.
// A benchmark target only: it trusts the mock upstream and prices with a flat rule.
//
// Env: PROXY_PORT (18110)  UPSTREAM_URL (http://127.0.0.1:18000)  FLOOR_DATA_DIR (a new temp dir)
//      FLOOR_INDEXES (all; `none`: only the money path's own keys, see below)
import { Buffer } from 'node:buffer';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setImmediate } from 'node:timers';
import { Worker } from 'node:worker_threads';
import { Pool } from 'undici';
// The SQLite binding the gateway itself picks for this Node version (docs/decisions/0005): the
// built one, as the other benchmark scripts use (bench/goals.sh builds first).
import {
  SqliteDatabase as Database,
  sqliteBindingPath,
} from '../packages/server/dist/store/sqlite-binding.js';

const INITIAL_BALANCE = 1_000_000_000_000_000;
// `node bench/ledger-floor.mjs --check DIR`: the floor's own ledger after a run (bench/goals.sh).
if (process.argv[2] === '--check')
  process.exit(checkLedger(path.join(process.argv[3], 'floor.sqlite')));

const PORT = Number(process.env.PROXY_PORT || 18110);
const UPSTREAM = process.env.UPSTREAM_URL || 'http://127.0.0.1:18000';
const file = path.join(
  process.env.FLOOR_DATA_DIR || mkdtempSync(path.join(tmpdir(), 'floor-')),
  'floor.sqlite',
);
const pool = new Pool(UPSTREAM, { connections: 256, pipelining: 1, keepAliveTimeout: 60_000 });

const db = new Database(file);
for (const pragma of [
  'journal_mode = WAL',
  'synchronous = NORMAL',
  'foreign_keys = ON',
  'cache_size = -65536',
  'mmap_size = 268435456',
  'temp_store = MEMORY',
  'wal_autocheckpoint = 20000',
])
  db.pragma(pragma);
db.exec(`
CREATE TABLE IF NOT EXISTS accounts (id text primary key, email text not null unique, balance bigint default 0 not null,
  held bigint default 0 not null, created_at bigint not null, budget_limit bigint, budget_window text,
  budget_window_start bigint default 0 not null, budget_spent bigint default 0 not null,
  constraint accounts_money_non_negative check (balance >= 0 and held >= 0 and balance - held >= 0));
CREATE TRIGGER IF NOT EXISTS accounts_money_bounds_update before update of balance, held on accounts
  when new.balance > 1000000000000000 or new.held > 1000000000000000 begin select raise(abort, 'bounds'); end;
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
  check (balance_delta between -1000000000000000 and 1000000000000000)) WITHOUT ROWID;
`);
// The indexes the rest of Tollgate reads (listings, retention, the sweeper, the resolution queue).
// FLOOR_INDEXES=none leaves them out: only what the money path itself needs (the primary keys and
// the idempotency key) — how much any schema could save.
if (process.env.FLOOR_INDEXES !== 'none')
  db.exec(`
CREATE INDEX IF NOT EXISTS requests_expires on requests (expires_at);
CREATE INDEX IF NOT EXISTS requests_key_created on requests (key_id, created_at, id);
CREATE INDEX IF NOT EXISTS requests_account_created on requests (account_id, created_at, id);
CREATE INDEX IF NOT EXISTS requests_usage_flag on requests (usage_flag, usage_reviewed_at) where usage_flag is not null;
CREATE INDEX IF NOT EXISTS requests_processing on requests (updated_at) where status = 'processing';
CREATE INDEX IF NOT EXISTS requests_unresolved on requests (created_at, id) where status = 'submission_unknown';
CREATE UNIQUE INDEX IF NOT EXISTS holds_request on holds (request_id);
CREATE INDEX IF NOT EXISTS journal_account_created on journal (account_id, created_at);
`);
db.prepare(
  `INSERT OR IGNORE INTO accounts (id, email, balance, created_at) VALUES ('acct', 'floor@example.test', ?, 0)`,
).run(INITIAL_BALANCE);
// Checkpoints off the request path, as Tollgate's store/sqlite-checkpointer.ts does.
new Worker(
  `const D = require(${JSON.stringify(sqliteBindingPath)});
  const db = new D(${JSON.stringify(file)}); db.pragma('busy_timeout = 5000');
  setInterval(() => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} }, 50);`,
  { eval: true },
).unref();

// Authentication: the key's SHA-256 against the keys known (Tollgate keeps them cached too).
const keys = new Map([[sha256('sk-bench'), { keyId: 'key', accountId: 'acct' }]]);
function sha256(text) {
  return createHash('sha256').update(text).digest('hex');
}

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
  begin: db.prepare('begin immediate'),
  commit: db.prepare('commit'),
  savepoint: db.prepare('savepoint one'),
  release: db.prepare('release one'),
  rollbackTo: db.prepare('rollback to one'),
};

// Group commit: every write of one event-loop turn in one transaction, each in its savepoint.
let queue = [];
function groupCommitted(write) {
  return new Promise((resolve, reject) => {
    if (queue.length === 0) setImmediate(commitQueue);
    queue.push({ write, resolve, reject });
  });
}
function commitQueue() {
  const batch = queue;
  queue = [];
  const outcomes = [];
  statements.begin.run();
  for (const item of batch) {
    statements.savepoint.run();
    try {
      outcomes.push({ value: item.write() });
      statements.release.run();
    } catch (error) {
      statements.rollbackTo.run();
      statements.release.run();
      outcomes.push({ error });
    }
  }
  statements.commit.run();
  batch.forEach((item, index) => {
    const outcome = outcomes[index];
    if ('error' in outcome) item.reject(outcome.error);
    else item.resolve(outcome.value);
  });
}

const PRICE_PER_TOKEN = 5; // micro-yuan, input and output alike: a flat rule for the floor
function claim(principal, idempotencyKey, fingerprint, url, model, reserve) {
  const now = Date.now();
  const ids = { request: randomUUID(), hold: randomUUID() };
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
      throw Object.assign(new Error('insufficient funds'), { status: 402 });
    statements.insertHold.run(ids.hold, principal.accountId, ids.request, reserve, now);
    statements.journal.run(
      randomUUID(),
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
}
function finish(principal, ids, reserve, usage, status, answer) {
  const tokens = (usage?.prompt_tokens | 0) + (usage?.completion_tokens | 0);
  const amount = Math.min(reserve, tokens * PRICE_PER_TOKEN);
  const now = Date.now();
  return groupCommitted(() => {
    if (statements.capture.run(amount, now, ids.hold, amount).changes !== 1)
      throw new Error('hold not open');
    statements.settle.run(amount, reserve, principal.accountId);
    statements.journal.run(
      randomUUID(),
      principal.accountId,
      'capture',
      -amount,
      -reserve,
      ids.hold,
      ids.request,
      'capture',
      now,
    );
    statements.outcome.run(status, answer, JSON.stringify(usage ?? null), amount, now, ids.request);
  });
}

async function readAll(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}
const errorBody = (message) => JSON.stringify({ error: { message, type: 'gateway_error' } });

async function accounted(request, response) {
  const principal = keys.get(
    sha256(String(request.headers.authorization ?? '').replace(/^Bearer /, '')),
  );
  const idempotencyKey = request.headers['idempotency-key'];
  if (principal === undefined || typeof idempotencyKey !== 'string') {
    response.writeHead(401, { 'content-type': 'application/json' });
    response.end(errorBody('a key and an Idempotency-Key are required'));
    return;
  }
  const raw = await readAll(request);
  const body = JSON.parse(raw);
  const reserve = (raw.length + (body.max_tokens ?? 1024)) * PRICE_PER_TOKEN;
  const ids = await claim(principal, idempotencyKey, sha256(raw), request.url, body.model, reserve);
  const payload = JSON.stringify(body);
  const upstream = await pool.request({
    path: request.url,
    method: 'POST',
    body: payload,
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer upstream-key',
      'content-length': Buffer.byteLength(payload),
    },
  });
  const type = String(upstream.headers['content-type'] ?? '');
  if (type.startsWith('text/event-stream')) {
    response.writeHead(upstream.statusCode, { 'content-type': type, 'cache-control': 'no-cache' });
    let carry = '';
    let transcript = '';
    let usage;
    for await (const chunk of upstream.body) {
      response.write(chunk);
      const text = chunk.toString('utf8');
      transcript += text;
      carry += text;
      let end;
      while ((end = carry.indexOf('\n\n')) >= 0) {
        const event = carry.slice(0, end);
        carry = carry.slice(end + 2);
        if (event.startsWith('data: {') && event.includes('"usage"'))
          usage = JSON.parse(event.slice(6)).usage ?? usage;
      }
    }
    await finish(principal, ids, reserve, usage, upstream.statusCode, transcript);
    response.end();
    return;
  }
  const answer = JSON.parse(await readAll(upstream.body));
  const out = JSON.stringify(answer);
  await finish(principal, ids, reserve, answer.usage, upstream.statusCode, out);
  response.writeHead(upstream.statusCode, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(out),
  });
  response.end(out);
}

const server = http.createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/__health') {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('ok');
    return;
  }
  accounted(request, response).catch((error) => {
    if (response.headersSent) return void response.destroy(error);
    const status = error.status ?? (error.code === 'SQLITE_CONSTRAINT_UNIQUE' ? 409 : 502);
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(errorBody(String(error?.message ?? error)));
  });
});
server.keepAliveTimeout = 120_000;
server.listen(PORT, '127.0.0.1', () =>
  console.log(`ledger-floor on http://127.0.0.1:${PORT} -> ${UPSTREAM}, ${file}`),
);
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    server.close();
    process.exit(0);
  });

/**
 * Every hold resolved, nothing held, the journal's sum equal to the balance's movement, every
 * record succeeded with its amount captured: the floor measured what it claims. Returns the exit code.
 */
function checkLedger(databaseFile) {
  const store = new Database(databaseFile, { readonly: true });
  const one = (query) => store.prepare(query).get();
  const figures = {
    requests: one('select count(*) n from requests').n,
    unsucceeded: one("select count(*) n from requests where status <> 'succeeded'").n,
    openHolds: one("select count(*) n from holds where state = 'open'").n,
    held: one("select held from accounts where id = 'acct'").held,
    openHeld: one("select coalesce(sum(amount), 0) s from holds where state = 'open'").s,
    balanceMoved: INITIAL_BALANCE - one("select balance from accounts where id = 'acct'").balance,
    journalMoved: -one('select coalesce(sum(balance_delta), 0) s from journal').s,
    captured: one("select coalesce(sum(amount), 0) s from requests where status = 'succeeded'").s,
  };
  // A run ends by stopping the floor with requests in flight: their records stay `processing`
  // with their holds open (Tollgate's sweeper resolves such; the floor has none), still held.
  const clean =
    figures.requests > 0 &&
    figures.unsucceeded === figures.openHolds &&
    figures.held === figures.openHeld &&
    figures.balanceMoved === figures.journalMoved &&
    figures.captured === figures.balanceMoved;
  console.log(`  ledger-floor: ${clean ? 'clean' : 'NOT clean'} ${JSON.stringify(figures)}`);
  return clean ? 0 : 1;
}
