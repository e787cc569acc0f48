#!/usr/bin/env node
// The floor of an accounted Node gateway on SQLite (issues 19 and 39): the harness's minimal JSON
// gateway (node:http + undici, anchors/node-proxy.mjs in ../shared/bench) plus the durable money
// that issue 19 says must be kept, and nothing else — no framework, no validation beyond a JSON
// parse, no limits, no logs, no metrics. Two promises, whatever the variant:
//
//   claim, committed before the upstream call: the request's record (unique key + idempotency key)
//     and its hold, guarded on the account (balance − held ≥ amount);
//   finish, committed before the answer: the hold's capture, exactly once, the account's balance
//     and held, the capture's journal, the record's outcome with the answer kept for a replay.
//
// Variants (FLOOR_VARIANT, or `--variant NAME`):
//   ordered-ids  (the default; `ledger-floor` in bench/goals.sh) Tollgate's own SQLite tables and
//                indexes for these four tables (requests, holds, journal, accounts, as migrated,
//                the money bounds abridged to one CHECK or trigger each) and Tollgate's own
//                time-ordered ids: `createIdGenerator().next('req' | 'hold' | 'jrn')` of
//                packages/server/src/util/effects.ts, imported from the build. The claim writes the
//                record, the guarded hold on the account, the hold row and its journal entry; the
//                finish the capture, the account, the capture's journal entry, the outcome.
//   random-ids   the same, with a `randomUUID()` for every row's key: the floor as it was until
//                2026-12-05 (issue 39), kept for comparison. Random 128-bit text keys in the
//                B-trees keyed by an id (three primary keys, holds_request) put every insert on a
//                random page, so each group commit rewrites many.
//   event-log    one append-only table of events (`events`, ordered by its integer sequence):
//                claim = the guarded account update + one `claim` row (request id, key id,
//                idempotency key, fingerprint, path, model, amount held); finish = one `finish` row (status,
//                usage, the answer, the amount captured and the amount released) inserted only
//                from its request's claim, + the account update. One unique index over claims'
//                (key_id, idempotency_key), one over (request_id, kind): a request is claimed once
//                and captured once. No listing, retention or sweeper index: in that design those
//                are a read model built from the log by sequence, off the request path
//                (docs/decisions/0019-hot-path-event-log.md).
//   event-log-projected  the event log plus that read model, built in the same process: every
//                50 ms a projector reads the events after the last one it applied, in order, and
//                in one transaction writes a record row per claim (updated by its finish) and a
//                statement entry per event, with the listing, retention and sweeper indexes
//                (by key, by account, by expiry, the processing ones; statements by account), and
//                the sequence it reached. Off the request path but in the gateway's process, so
//                its CPU counts: what the design costs in all.
//   event-log-projected-apart  the same read model, built by the same rule, in another OS process:
//                the floor spawns `ledger-floor.mjs --projector FILE` in a session of its own (so
//                the harness, which counts the gateway's process group, does not count it), which
//                opens the same database (WAL: readers never wait; one writer at a time, both
//                connections with a busy_timeout). It reads the events outside its write
//                transaction, then applies at most PROJECTED_APART_PER_BATCH of them in one short
//                `BEGIN IMMEDIATE` (the request path's group commit waits for it, in SQLite's busy
//                handler, at most that long), pausing between batches. It writes its own CPU and
//                the events it applied to DIR/projector-PID.json when it stops (`--projector-report`).
//
// Writes are group-committed as Tollgate's are (every claim or finish of one event-loop turn in
// one `BEGIN IMMEDIATE … COMMIT`, each in a savepoint), with WAL, `synchronous = NORMAL` and the
// PASSIVE checkpoint on a worker thread. So `bench/goals.sh` can show how much of Tollgate's CPU
// per request the durable money costs by itself, under each schema, and how much is the rest.
// A benchmark target only: it trusts the mock upstream and prices with a flat rule.
//
//   node bench/ledger-floor.mjs [--variant NAME]       the gateway (env below)
//   node bench/ledger-floor.mjs --check DIR [LABEL]    the ledger of DIR/floor.sqlite after a run
//   node bench/ledger-floor.mjs --self-test [NAME…]    each variant end to end: answers billed once,
//       a replayed idempotency key refused, a second finish and a second claim refused, the
//       ledger clean (exit 1 otherwise; bench/goals.sh runs it every time)
//   node bench/ledger-floor.mjs --store-loop [--requests 20000] [--rounds 3] [--group 16]
//       [--variants a,b] [--cpu 0]   the store alone, no HTTP: claims and finishes in a tight loop,
//       `--group` per commit, each variant in its own process, rounds interleaved; CPU per request
//       (and the apart projector's CPU per request beside it)
//   node bench/ledger-floor.mjs --projector-report DIR RESULTS.JSON NAME
//       after a harness run of event-log-projected-apart (bench/goals.sh): per round, the gateway's
//       CPU per request at max ÷ the passthrough's, the projector process's over the same window,
//       and their sum
//   node bench/ledger-floor.mjs --held-report DIR NAME
//       after a harness run of a projected variant: per round, how often and how long the projector
//       held the request path (the apart one: group commits that waited for its batch; the one in
//       the process: its batches, which run on the event loop)
//
// Env: PROXY_PORT (18110)  UPSTREAM_URL (http://127.0.0.1:18000)  FLOOR_DATA_DIR (a new temp dir)
//      FLOOR_VARIANT (ordered-ids)  FLOOR_INDEXES (all; `none`: only the money path's own keys,
//      see below; the table variants only)
import { Buffer } from 'node:buffer';
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { clearInterval, setImmediate, setInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { fetch, Pool } from 'undici';
// The SQLite binding the gateway itself picks for this Node version (docs/decisions/0005) and
// Tollgate's id generator: the built ones, as the other benchmark scripts use (bench/goals.sh
// builds first).
import {
  SqliteDatabase as Database,
  sqliteBindingPath,
} from '../packages/server/dist/store/sqlite-binding.js';
import { createIdGenerator } from '../packages/server/dist/util/effects.js';
import { parseFlags } from './lib.mjs';

const SELF = fileURLToPath(import.meta.url);
const VARIANTS = [
  'random-ids',
  'ordered-ids',
  'event-log',
  'event-log-projected',
  'event-log-projected-apart',
];
export const INITIAL_BALANCE = 1_000_000_000_000_000;
export const PRICE_PER_TOKEN = 5; // micro-yuan, input and output alike: a flat rule for the floor

const PRAGMAS = [
  'journal_mode = WAL',
  'synchronous = NORMAL',
  'foreign_keys = ON',
  'cache_size = -65536',
  'mmap_size = 268435456',
  'temp_store = MEMORY',
  'wal_autocheckpoint = 20000',
];
const ACCOUNTS = `
CREATE TABLE IF NOT EXISTS accounts (id text primary key, email text not null unique, balance bigint default 0 not null,
  held bigint default 0 not null, created_at bigint not null, budget_limit bigint, budget_window text,
  budget_window_start bigint default 0 not null, budget_spent bigint default 0 not null,
  constraint accounts_money_non_negative check (balance >= 0 and held >= 0 and balance - held >= 0));
CREATE TRIGGER IF NOT EXISTS accounts_money_bounds_update before update of balance, held on accounts
  when new.balance > 1000000000000000 or new.held > 1000000000000000 begin select raise(abort, 'bounds'); end;`;
const TABLES = `
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
const LISTING_INDEXES = `
CREATE INDEX IF NOT EXISTS requests_expires on requests (expires_at);
CREATE INDEX IF NOT EXISTS requests_key_created on requests (key_id, created_at, id);
CREATE INDEX IF NOT EXISTS requests_account_created on requests (account_id, created_at, id);
CREATE INDEX IF NOT EXISTS requests_usage_flag on requests (usage_flag, usage_reviewed_at) where usage_flag is not null;
CREATE INDEX IF NOT EXISTS requests_processing on requests (updated_at) where status = 'processing';
CREATE INDEX IF NOT EXISTS requests_unresolved on requests (created_at, id) where status = 'submission_unknown';
CREATE UNIQUE INDEX IF NOT EXISTS holds_request on holds (request_id);
CREATE INDEX IF NOT EXISTS journal_account_created on journal (account_id, created_at);`;
// The event log: the sequence is the rowid (append-only, never deleted on the path). A claim row is
// the record and its hold (and the hold's journal entry: held + amount); a finish row is the
// outcome and the capture (and the capture's journal entry: balance − amount, held − released).
const EVENT_LOG = `
CREATE TABLE IF NOT EXISTS events (seq integer primary key, kind text not null check (kind in ('claim', 'finish')),
  request_id text not null, account_id text not null, key_id text, idempotency_key text, fingerprint text,
  path text, model text, amount bigint not null check (amount between 0 and 1000000000000000),
  released bigint, status text, http_status integer, usage text, response_body text, created_at bigint not null);
CREATE UNIQUE INDEX IF NOT EXISTS events_claim_key on events (key_id, idempotency_key) where kind = 'claim';
CREATE UNIQUE INDEX IF NOT EXISTS events_request_kind on events (request_id, kind);`;
// The read model of event-log-projected: what listings, statements, retention and the sweeper read,
// written by the projector only, and the sequence it has applied up to.
const READ_MODEL = `
CREATE TABLE IF NOT EXISTS projection (name text primary key, last_seq integer not null);
CREATE TABLE IF NOT EXISTS records (id text primary key, key_id text not null, account_id text not null,
  status text not null, reserve_amount bigint not null, amount bigint, created_at bigint not null,
  updated_at bigint not null, expires_at bigint not null, claim_seq integer not null, finish_seq integer) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS records_key_created on records (key_id, created_at, id);
CREATE INDEX IF NOT EXISTS records_account_created on records (account_id, created_at, id);
CREATE INDEX IF NOT EXISTS records_expires on records (expires_at);
CREATE INDEX IF NOT EXISTS records_processing on records (updated_at) where status = 'processing';
CREATE TABLE IF NOT EXISTS statement (seq integer primary key, account_id text not null, request_id text not null,
  kind text not null, balance_delta bigint not null, held_delta bigint not null, created_at bigint not null);
CREATE INDEX IF NOT EXISTS statement_account_created on statement (account_id, created_at);
INSERT OR IGNORE INTO projection (name, last_seq) VALUES ('read-model', 0);`;

/**
 * The floor's store on `file`: the schema of `variant`, its pragmas, the checkpoint thread, and
 * `claim` / `finish`, each resolved only once its group's COMMIT is done.
 */
function openStore(file, { variant, indexes = true }) {
  if (!VARIANTS.includes(variant))
    throw new Error(`unknown variant ${variant} (one of ${VARIANTS.join(', ')})`);
  const db = new Database(file);
  for (const pragma of PRAGMAS) db.pragma(pragma);
  db.exec(ACCOUNTS);
  const eventLog = variant.startsWith('event-log');
  db.exec(eventLog ? EVENT_LOG : TABLES);
  if (!eventLog && indexes) db.exec(LISTING_INDEXES);
  const projected = variant.startsWith('event-log-projected');
  const apart = variant === 'event-log-projected-apart';
  if (projected) db.exec(READ_MODEL);
  // With the projector in another process, two connections write: the group commit's BEGIN
  // IMMEDIATE waits (blocking this event loop) while the projector's short batch commits.
  if (apart) db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.prepare(
    `INSERT OR IGNORE INTO accounts (id, email, balance, created_at) VALUES ('acct', 'floor@example.test', ?, 0)`,
  ).run(INITIAL_BALANCE);
  // Checkpoints off the request path, as Tollgate's store/sqlite-checkpointer.ts does.
  const checkpointer = new Worker(
    `const D = require(${JSON.stringify(sqliteBindingPath)});
    const db = new D(${JSON.stringify(file)}); db.pragma('busy_timeout = 5000');
    setInterval(() => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} }, 50);`,
    { eval: true },
  );
  checkpointer.unref();
  const groupCommitted = groupCommitter(db);
  const ids = createIdGenerator();
  const money = eventLog
    ? eventLogMoney(db, groupCommitted, (prefix) => ids.next(prefix))
    : tableMoney(
        db,
        groupCommitted,
        variant === 'random-ids' ? () => randomUUID() : (prefix) => ids.next(prefix),
      );
  // The read model, built in batches between the group commits (both run whole within one
  // event-loop callback on this one connection, so they never interleave).
  const projectHere = variant === 'event-log-projected' ? projector(db) : () => 0;
  const project = () => {
    const started = performance.now();
    const count = projectHere();
    if (count > 0) noteHeld(started);
    return count;
  };
  const projecting =
    variant === 'event-log-projected'
      ? setInterval(() => {
          for (let round = 0; round < 4 && project() === PROJECTED_PER_BATCH; round += 1);
        }, 50).unref()
      : undefined;
  const apartProjector = apart ? spawnProjector(file) : undefined;
  return {
    ...money,
    /**
     * Applies every event not yet projected (the projected variants; otherwise nothing). Resolves
     * to the apart projector's CPU so far and the events it applied (`undefined` otherwise).
     */
    async catchUp() {
      if (apartProjector) return apartProjector.ask('catch-up');
      while (project() > 0);
      return undefined;
    },
    async close() {
      clearInterval(projecting);
      await apartProjector?.stop();
      await checkpointer.terminate();
      db.close();
    },
  };
}

const BUSY_TIMEOUT_MS = 5000;
/** The apart projector's batch: the longest the request path's group commit waits for it. */
const PROJECTED_APART_PER_BATCH = 256;

/**
 * event-log-projected-apart: the projector in a child process in its own session (`detached`:
 * outside the gateway's process group, which the harness measures and signals), talking over an
 * IPC channel. It exits when the channel closes, i.e. when this process ends however it ends.
 */
function spawnProjector(file) {
  const child = spawn(process.execPath, [SELF, '--projector', file], {
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  child.unref();
  child.channel?.unref();
  const exited = once(child, 'exit').catch(() => {});
  const waiting = [];
  child.on('message', (message) => waiting.shift()?.resolve(message));
  exited.then(() => {
    for (const { reject } of waiting.splice(0)) reject(new Error('the projector exited'));
  });
  return {
    /** Sends `what`; resolves to the projector's answer (its CPU and the events it applied). */
    ask(what) {
      child.channel?.ref();
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        child.send(what);
      }).finally(() => {
        if (waiting.length === 0) child.channel?.unref();
      });
    },
    async stop() {
      child.ref(); // this process waits for it to exit
      if (child.connected) child.disconnect();
      await exited;
    },
  };
}

/**
 * `--projector FILE`: the apart projector's process. Every 50 ms it applies the events not yet
 * projected, PROJECTED_APART_PER_BATCH per transaction, 2 ms apart (so the request path's BEGIN
 * IMMEDIATE, sleeping in its busy handler, gets the lock between two batches); on a message it
 * catches up and answers with its CPU and the events it applied; when the channel closes it writes
 * its samples (every 250 ms: time, CPU µs, events applied) beside the database and exits.
 */
function projectorProcess(file) {
  const db = new Database(file);
  for (const pragma of PRAGMAS) db.pragma(pragma);
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  const project = projector(db, { perBatch: PROJECTED_APART_PER_BATCH, readOutside: true });
  const started = Date.now();
  let applied = 0;
  const usage = () => {
    const { user, system } = process.cpuUsage();
    return { cpuUs: user + system, applied };
  };
  let running = false;
  const step = () => {
    const count = project();
    applied += count;
    return count;
  };
  const tick = () => {
    if (running) return;
    running = true;
    const next = () => {
      if (step() === PROJECTED_APART_PER_BATCH) setTimeout(next, 2);
      else running = false;
    };
    next();
  };
  const ticking = setInterval(tick, 50);
  const samples = [];
  const sampling = setInterval(() => {
    const { cpuUs } = usage();
    samples.push([Date.now(), cpuUs, applied]);
  }, 250);
  process.on('message', () => {
    while (step() > 0);
    process.send(usage());
  });
  process.on('disconnect', () => {
    clearInterval(ticking);
    clearInterval(sampling);
    const { cpuUs } = usage();
    samples.push([Date.now(), cpuUs, applied]);
    writeFileSync(
      path.join(path.dirname(file), `projector-${process.pid}.json`),
      JSON.stringify({ started, stopped: Date.now(), applied, cpuUs, samples }),
    );
    db.close();
    process.exit(0);
  });
}

const PROJECTED_PER_BATCH = 4096;
/**
 * The projector of the projected variants: applies the events after the sequence it reached, in
 * order, at most `perBatch` in one transaction with the sequence they take it to (so each is
 * applied exactly once). With `readOutside` (the apart projector) it reads the events before its
 * write transaction (a WAL read, which waits for no one) and holds the write lock only to apply
 * them, after checking that the sequence reached is still the one it read from. Returns how many
 * it applied.
 */
function projector(db, { perBatch = PROJECTED_PER_BATCH, readOutside = false } = {}) {
  const statements = {
    begin: db.prepare('begin immediate'),
    commit: db.prepare('commit'),
    rollback: db.prepare('rollback'),
    last: db.prepare("select last_seq from projection where name = 'read-model'").pluck(),
    events:
      db.prepare(`select seq, kind, request_id, account_id, key_id, amount, released, created_at
      from events where seq > ? order by seq limit ?`),
    record:
      db.prepare(`insert into records (id, key_id, account_id, status, reserve_amount, created_at, updated_at,
      expires_at, claim_seq) values (?, ?, ?, 'processing', ?, ?, ?, ?, ?)`),
    outcome:
      db.prepare(`update records set status = 'succeeded', amount = ?, updated_at = ?, finish_seq = ?
      where id = ?`),
    entry:
      db.prepare(`insert into statement (seq, account_id, request_id, kind, balance_delta, held_delta, created_at)
      values (?, ?, ?, ?, ?, ?, ?)`),
    advance: db.prepare("update projection set last_seq = ? where name = 'read-model'"),
  };
  return function project() {
    let events;
    let from;
    if (readOutside) {
      from = statements.last.get();
      events = statements.events.all(from, perBatch);
      if (events.length === 0) return 0;
    }
    statements.begin.run();
    try {
      if (!readOutside) events = statements.events.all(statements.last.get(), perBatch);
      else if (statements.last.get() !== from)
        throw new Error('another projector moved the read model');
      for (const event of events) {
        const { seq, request_id: request, account_id: account, created_at: at } = event;
        if (event.kind === 'claim') {
          statements.record.run(
            request,
            event.key_id,
            account,
            event.amount,
            at,
            at,
            at + 30 * 86_400_000,
            seq,
          );
          statements.entry.run(seq, account, request, 'hold', 0, event.amount, at);
        } else {
          statements.outcome.run(event.amount, at, seq, request);
          statements.entry.run(
            seq,
            account,
            request,
            'capture',
            -event.amount,
            -event.released,
            at,
          );
        }
      }
      if (events.length > 0) statements.advance.run(events.at(-1).seq);
      statements.commit.run();
      return events.length;
    } catch (error) {
      statements.rollback.run();
      throw error;
    }
  };
}

/**
 * How long the projector held the request path, for `--held-report`: with the projector apart,
 * each group commit's BEGIN IMMEDIATE that waited (in SQLite's busy handler) for its batch; with it
 * in the process, each batch (it runs on the event loop, so nothing else does meanwhile). Every
 * such wait of at least HELD_AT_LEAST_MS, and how many group commits there were.
 */
const held = { commits: 0, waitsMs: [] };
const HELD_AT_LEAST_MS = 0.05;
const noteHeld = (started) => {
  const ms = performance.now() - started;
  if (ms >= HELD_AT_LEAST_MS) held.waitsMs.push(Math.round(ms * 1000) / 1000);
};

/** Group commit: every write of one event-loop turn in one transaction, each in its savepoint. */
function groupCommitter(db) {
  const statements = {
    begin: db.prepare('begin immediate'),
    commit: db.prepare('commit'),
    savepoint: db.prepare('savepoint one'),
    release: db.prepare('release one'),
    rollbackTo: db.prepare('rollback to one'),
  };
  let queue = [];
  function commitQueue() {
    const batch = queue;
    queue = [];
    const outcomes = [];
    held.commits += 1;
    const waiting = performance.now();
    statements.begin.run();
    noteHeld(waiting);
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
  return (write) =>
    new Promise((resolve, reject) => {
      if (queue.length === 0) setImmediate(commitQueue);
      queue.push({ write, resolve, reject });
    });
}

export const priced = (usage, reserve) =>
  Math.min(
    reserve,
    ((usage?.prompt_tokens | 0) + (usage?.completion_tokens | 0)) * PRICE_PER_TOKEN,
  );
export const insufficient = () => Object.assign(new Error('insufficient funds'), { status: 402 });

/** Tollgate's tables: record, hold, two journal entries; ids from `newId(prefix)`. */
function tableMoney(db, groupCommitted, newId) {
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

/** The one-table event log: a claim row and a finish row per request, two account updates. */
function eventLogMoney(db, groupCommitted, newId) {
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

// ------------------------------------------------------------------------------------ the gateway

function serve(variant) {
  const file = path.join(
    process.env.FLOOR_DATA_DIR || mkdtempSync(path.join(tmpdir(), 'floor-')),
    'floor.sqlite',
  );
  const store = openStore(file, { variant, indexes: process.env.FLOOR_INDEXES !== 'none' });
  if (variant.startsWith('event-log-projected')) writeHeld(path.dirname(file));
  serveGateway(store, `${variant}`, file);
}

/**
 * The gateway around a store's `claim` and `finish` (this file's SQLite ones, or
 * bench/ledger-floor-pg.mjs's): node:http + undici, the key's hash, a JSON parse, the claim before
 * the upstream call and the finish before the answer. A store's refusal answers its `status` (409
 * for a used idempotency key, 402 for funds), anything else 502.
 */
export function serveGateway(store, label, where) {
  const port = Number(process.env.PROXY_PORT || 18110);
  const upstreamUrl = process.env.UPSTREAM_URL || 'http://127.0.0.1:18000';
  const pool = new Pool(upstreamUrl, { connections: 256, pipelining: 1, keepAliveTimeout: 60_000 });

  // Authentication: the key's SHA-256 against the keys known (Tollgate keeps them cached too).
  const keys = new Map([[sha256('sk-bench'), { keyId: 'key', accountId: 'acct' }]]);
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
    const ids = await store.claim(
      principal,
      idempotencyKey,
      sha256(raw),
      request.url,
      body.model,
      reserve,
    );
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
      response.writeHead(upstream.statusCode, {
        'content-type': type,
        'cache-control': 'no-cache',
      });
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
      await store.finish(principal, ids, reserve, usage, upstream.statusCode, transcript);
      response.end();
      return;
    }
    const answer = JSON.parse(await readAll(upstream.body));
    const out = JSON.stringify(answer);
    await store.finish(principal, ids, reserve, answer.usage, upstream.statusCode, out);
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
  server.listen(port, '127.0.0.1', () =>
    console.log(`ledger-floor (${label}) on http://127.0.0.1:${port} -> ${upstreamUrl}, ${where}`),
  );
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.on(signal, () => {
      server.close();
      process.exit(0);
    });
}

/** The SQLite gateway's exit: what the projector held it for (`--held-report`), beside the data. */
function writeHeld(dir) {
  process.prependListener('SIGTERM', () =>
    writeFileSync(path.join(dir, `held-${process.pid}.json`), JSON.stringify(held)),
  );
}

export function sha256(text) {
  return createHash('sha256').update(text).digest('hex');
}
async function readAll(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

// ------------------------------------------------------------------------------------ the check

/**
 * The floor's ledger, whichever schema: every hold resolved or still open and held, the journal's
 * sum equal to the balance's movement and to the captures, no request captured twice. A run ends
 * by stopping the floor with requests in flight: their records stay `processing` with their holds
 * open (Tollgate's sweeper resolves such; the floor has none), still held.
 */
function ledgerFigures(databaseFile) {
  const store = new Database(databaseFile, { readonly: true });
  try {
    const one = (query) => store.prepare(query).get();
    const balanceMoved =
      INITIAL_BALANCE - one("select balance from accounts where id = 'acct'").balance;
    const held = one("select held from accounts where id = 'acct'").held;
    if (one("select count(*) n from sqlite_master where name = 'events'").n === 1) {
      const figures = {
        schema: 'event-log',
        requests: one("select count(*) n from events where kind = 'claim'").n,
        finished: one("select count(*) n from events where kind = 'finish'").n,
        finishedWithoutClaim:
          one(`select count(*) n from events f where f.kind = 'finish' and not exists
          (select 1 from events c where c.request_id = f.request_id and c.kind = 'claim')`).n,
        capturedTwice:
          one(`select count(*) n from (select request_id from events where kind = 'finish'
          group by request_id having count(*) > 1)`).n,
        releasedOtherThanHeld:
          one(`select count(*) n from events f join events c on c.request_id = f.request_id
          and c.kind = 'claim' where f.kind = 'finish' and (f.released <> c.amount or f.amount > c.amount)`)
            .n,
        held,
        openHeld:
          one(`select coalesce(sum(amount), 0) s from events c where c.kind = 'claim' and not exists
          (select 1 from events f where f.request_id = c.request_id and f.kind = 'finish')`).s,
        balanceMoved,
        captured: one("select coalesce(sum(amount), 0) s from events where kind = 'finish'").s,
      };
      if (one("select count(*) n from sqlite_master where name = 'projection'").n === 1)
        Object.assign(figures, projectionFigures(one));
      return { clean: eventLogClean(figures), figures };
    }
    const figures = {
      schema: 'tables',
      requests: one('select count(*) n from requests').n,
      unsucceeded: one("select count(*) n from requests where status <> 'succeeded'").n,
      openHolds: one("select count(*) n from holds where state = 'open'").n,
      capturedTwice:
        one(`select count(*) n from (select request_id from journal where kind = 'capture'
        group by request_id having count(*) > 1)`).n,
      held,
      openHeld: one("select coalesce(sum(amount), 0) s from holds where state = 'open'").s,
      balanceMoved,
      journalMoved: -one('select coalesce(sum(balance_delta), 0) s from journal').s,
      captured: one("select coalesce(sum(amount), 0) s from requests where status = 'succeeded'").s,
    };
    return { clean: tablesClean(figures), figures };
  } finally {
    store.close();
  }
}

/**
 * The read model of event-log-projected against the log up to the sequence it reached: a record
 * per claim, succeeded where finished, with the captured amount; a statement entry per event, its
 * sums equal to the events'. `lag`: events not yet projected (a run stops the floor mid-flight).
 */
function projectionFigures(one) {
  const last = one("select last_seq s from projection where name = 'read-model'").s;
  const upTo = (kind, what) =>
    one(`select ${what} v from events where kind = '${kind}' and seq <= ${last}`).v;
  const expected = {
    records: upTo('claim', 'count(*)'),
    succeeded: upTo('finish', 'count(*)'),
    captured: upTo('finish', 'coalesce(sum(amount), 0)'),
    entries: one(`select count(*) v from events where seq <= ${last}`).v,
    statementMoved: -upTo('finish', 'coalesce(sum(amount), 0)'),
    statementHeld:
      upTo('claim', 'coalesce(sum(amount), 0)') - upTo('finish', 'coalesce(sum(released), 0)'),
  };
  const actual = {
    records: one('select count(*) v from records').v,
    succeeded: one("select count(*) v from records where status = 'succeeded'").v,
    captured: one("select coalesce(sum(amount), 0) v from records where status = 'succeeded'").v,
    entries: one('select count(*) v from statement').v,
    statementMoved: one('select coalesce(sum(balance_delta), 0) v from statement').v,
    statementHeld: one('select coalesce(sum(held_delta), 0) v from statement').v,
  };
  return {
    projectedTo: last,
    lag: one('select coalesce(max(seq), 0) v from events').v - last,
    readModelMismatches: Object.keys(expected).filter((name) => expected[name] !== actual[name])
      .length,
  };
}

/** `--check DIR [LABEL]`: prints the ledger's figures; returns the exit code. */
function checkLedger(databaseFile, label = 'ledger-floor') {
  const { clean, figures } = ledgerFigures(databaseFile);
  console.log(`  ${label}: ${clean ? 'clean' : 'NOT clean'} ${JSON.stringify(figures)}`);
  return clean ? 0 : 1;
}

// ------------------------------------------------------------------------------- the self-test

/**
 * The ledger rules of a floor's store, whatever its database (ledger-floor-pg.mjs reads the same
 * figures from PostgreSQL). The event log: every finish has its claim, nothing captured twice,
 * a release only of what was held, what is held is what open claims hold, what was captured is
 * what left the balances, and the read model (where built) equals the log up to its cursor.
 */
export const eventLogClean = (figures) =>
  figures.requests > 0 &&
  (figures.projectedTo === undefined || figures.readModelMismatches === 0) &&
  figures.finishedWithoutClaim === 0 &&
  figures.capturedTwice === 0 &&
  figures.releasedOtherThanHeld === 0 &&
  figures.held === figures.openHeld &&
  figures.captured === figures.balanceMoved;

/** The tables: one open hold per unfinished record, one capture each, journal and balances agree. */
export const tablesClean = (figures) =>
  figures.requests > 0 &&
  figures.unsucceeded === figures.openHolds &&
  figures.capturedTwice === 0 &&
  figures.held === figures.openHeld &&
  figures.balanceMoved === figures.journalMoved &&
  figures.captured === figures.balanceMoved;

export const TEST_USAGE = { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 };

/**
 * Each variant end to end, in its own process behind a small upstream: every answer 2xx and
 * billed once, a replayed idempotency key refused (409) without a second capture, and then, on
 * the same file in this process, a second finish of a captured request and a second claim of a
 * used key both refused; the ledger clean with exactly what was answered captured. Exit code.
 */
async function selfTest(variants) {
  const upstream = await testUpstream();
  const requests = 24;
  // The variants side by side (each in its own process and directory): most of a variant's time
  // is its process starting.
  const outcomes = await Promise.all(
    variants.map(async (variant) => {
      const problems = [];
      const dir = mkdtempSync(path.join(tmpdir(), `floor-self-test-${variant}-`));
      try {
        await selfTestOne(variant, dir, upstream.address().port, requests, problems);
      } catch (error) {
        problems.push(String(error?.stack ?? error));
      }
      rmSync(dir, { recursive: true, force: true });
      return problems;
    }),
  );
  upstream.close();
  outcomes.forEach((problems, index) =>
    console.log(
      `  ${variants[index]}: ${problems.length === 0 ? `ok (${requests} requests billed once, a replayed key refused, a second finish and a second claim refused with a hold open, ledger clean)` : `FAILED: ${problems.join('; ')}`}`,
    ),
  );
  return outcomes.every((problems) => problems.length === 0) ? 0 : 1;
}

/** The self-test's upstream: a chat answer or a short stream, each with TEST_USAGE. */
export async function testUpstream() {
  const upstream = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      if (JSON.parse(body).stream === true) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'hi' } }] })}\n\n`);
        response.end(
          `data: ${JSON.stringify({ choices: [], usage: TEST_USAGE })}\n\ndata: [DONE]\n\n`,
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ id: 'x', choices: [{ message: { content: 'hi' } }], usage: TEST_USAGE }),
      );
    });
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  return upstream;
}

async function selfTestOne(variant, dir, upstreamPort, requests, problems) {
  await gatewayBurst(
    SELF,
    {
      UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}`,
      FLOOR_DATA_DIR: dir,
      FLOOR_VARIANT: variant,
    },
    requests,
    problems,
  );
  const file = path.join(dir, 'floor.sqlite');
  const store = openStore(file, { variant });
  try {
    const reader = new Database(file, { readonly: true });
    const captured = variant.startsWith('event-log')
      ? reader
          .prepare(
            `select c.request_id request, c.amount reserve from events c join events f
               on f.request_id = c.request_id and f.kind = 'finish' where c.kind = 'claim' limit 1`,
          )
          .get()
      : reader
          .prepare(
            `select id request, hold_id hold, reserve_amount reserve from requests where status = 'succeeded' limit 1`,
          )
          .get();
    reader.close();
    await secondAttemptsRefused(store, captured, problems);
    await store.catchUp();
  } finally {
    await store.close();
  }
  const { clean, figures } = ledgerFigures(file);
  checkSelfTestFigures(clean, figures, requests, problems);
}

/**
 * The gateway `script` in a child process (env: PROXY_PORT, plus `env`): `requests` chat requests
 * at once (a third streamed), each answered 200, and a replay of a used idempotency key answered
 * 409; the child stopped (SIGTERM) before it returns.
 */
export async function gatewayBurst(script, env, requests, problems) {
  const port = await freePort();
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, ...env, PROXY_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (chunk) => (errors += chunk));
  const exited = once(child, 'exit');
  await Promise.race([
    once(child.stdout, 'data'),
    exited.then(([code]) => {
      throw new Error(`the floor ${JSON.stringify(env)} exited (${code}): ${errors}`);
    }),
  ]);
  const base = `http://127.0.0.1:${port}/v1/chat/completions`;
  const chat = (key, stream) =>
    fetch(base, {
      method: 'POST',
      headers: {
        authorization: 'Bearer sk-bench',
        'idempotency-key': key,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream }),
    });
  try {
    const answers = await Promise.all(
      Array.from({ length: requests }, (_, index) => chat(`key-${index}`, index % 3 === 0)),
    );
    for (const answer of answers) {
      await answer.text();
      if (answer.status !== 200) problems.push(`an answer was ${answer.status}`);
    }
    const replay = await chat('key-1', false);
    await replay.text();
    if (replay.status !== 409) problems.push(`a replayed key answered ${replay.status}, not 409`);
  } finally {
    child.kill('SIGTERM');
    await exited.catch(() => {});
  }
}

/**
 * On a store after a burst: with a larger hold left open (so that the account's own bounds,
 * held ≥ 0, cannot be what refuses), a second finish of the captured request `captured` and a
 * second claim of a used idempotency key (`key-2`) must both be refused.
 */
export async function secondAttemptsRefused(store, captured, problems) {
  const principal = { keyId: 'key', accountId: 'acct' };
  const refused = async (attempt) =>
    attempt.then(
      () => false,
      () => true,
    );
  await store.claim(
    principal,
    'left-open',
    'f',
    '/v1/chat/completions',
    'm',
    10 * captured.reserve,
  );
  if (
    !(await refused(
      store.finish(principal, captured, captured.reserve, TEST_USAGE, 200, '{"again":true}'),
    ))
  )
    problems.push('a second finish of a captured request was accepted');
  if (!(await refused(store.claim(principal, 'key-2', 'f', '/v1/chat/completions', 'm', 100))))
    problems.push('a used idempotency key was claimed again');
}

/** The ledger after a self-test: clean, caught up, every answered request captured once. */
export function checkSelfTestFigures(clean, figures, requests, problems) {
  if (!clean) problems.push(`ledger not clean ${JSON.stringify(figures)}`);
  if (figures.lag !== undefined && figures.lag !== 0)
    problems.push(`the read model is ${figures.lag} events behind after catching up`);
  if (figures.requests !== requests + 1)
    problems.push(`${figures.requests} records, not ${requests} and the one left open`);
  const expected = requests * (TEST_USAGE.prompt_tokens + TEST_USAGE.completion_tokens) * 5;
  if (figures.captured !== expected || figures.balanceMoved !== expected)
    problems.push(
      `captured ${figures.captured} and moved ${figures.balanceMoved}, not ${expected} each`,
    );
}

export async function freePort() {
  const probe = http.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

// ------------------------------------------------------------------------------- the store loop

// The answer kept per request, the size of the harness mock's chat answer.
export const LOOP_ANSWER = JSON.stringify({
  id: 'chatcmpl-bench0001',
  object: 'chat.completion',
  created: 1700000000,
  model: 'gpt-4o-mini',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: 'Hello! This is a fixed answer from the benchmark mock upstream.',
        refusal: null,
      },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: { prompt_tokens: 12, completion_tokens: 14, total_tokens: 26 },
  system_fingerprint: 'fp_bench',
});
export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/**
 * `--store-loop`: each variant's store alone, no HTTP — `group` claims in one commit, then their
 * `group` finishes in the next — in a fresh process and database per measurement, pinned to one
 * CPU when taskset is there, the variants' order rotated every round. Prints the CPU per request
 * (the whole process: main thread and checkpoint thread) and each variant ÷ random-ids per round.
 */
async function storeLoop(flags) {
  const requests = Number(flags.requests ?? 20_000);
  const rounds = Number(flags.rounds ?? 3);
  const group = Number(flags.group ?? 16);
  const variants = (flags.variants ?? VARIANTS.join(',')).split(',');
  const pin =
    spawnSync('taskset', ['-c', '0', 'true']).status === 0
      ? ['taskset', '-c', String(flags.cpu ?? '0')]
      : [];
  const measured = Object.fromEntries(variants.map((variant) => [variant, []]));
  let failed = 0;
  for (let round = 0; round < rounds; round += 1) {
    const order = variants.map((_, index) => variants[(index + round) % variants.length]);
    for (const variant of order) {
      const command = [
        ...pin,
        process.execPath,
        SELF,
        '--store-loop-one',
        variant,
        requests,
        group,
      ];
      const run = spawnSync(command[0], command.slice(1).map(String), { encoding: 'utf8' });
      const result = run.status === 0 ? JSON.parse(run.stdout.trim().split('\n').at(-1)) : null;
      if (result === null || !result.clean) {
        failed += 1;
        console.log(`  ${variant}: FAILED ${run.stdout}${run.stderr}`);
        measured[variant].push({ cpuUsPerReq: NaN, projectorCpuUsPerReq: NaN, wallUsPerReq: NaN });
      } else measured[variant].push(result);
    }
  }
  const format = (value) => (Number.isFinite(value) ? value.toFixed(2) : String(value));
  const whole = (value) => (Number.isFinite(value) ? value.toFixed(0) : String(value));
  const reference = measured['random-ids'];
  console.log(
    `\nThe store alone (--store-loop: ${requests} requests after ${Math.round(requests / 10)} of warm-up, ${group} claims or finishes per commit, ${rounds} round(s), variants rotated; ${pin.length ? `pinned to CPU ${flags.cpu ?? 0}` : 'not pinned'}):\n`,
  );
  console.log(
    '| variant | CPU µs/req (median; rounds) | ÷ random-ids (median; rounds) | apart projector: CPU µs/req; (store + projector) ÷ random-ids | wall µs/req (median) |',
  );
  console.log('|---|---|---|---|---|');
  const cells = (values) => `${format(median(values))} (${values.map(format).join(', ')})`;
  for (const variant of variants) {
    const cpu = measured[variant].map((result) => result.cpuUsPerReq);
    const apart = measured[variant].map((result) => result.projectorCpuUsPerReq ?? 0);
    const ratios = reference ? cpu.map((value, round) => value / reference[round].cpuUsPerReq) : [];
    const total = reference
      ? cpu.map((value, round) => (value + apart[round]) / reference[round].cpuUsPerReq)
      : [];
    console.log(
      `| ${variant} | ${whole(median(cpu))} (${cpu.map(whole).join(', ')}) | ${reference ? cells(ratios) : '–'} | ${apart.some((value) => value > 0) ? `${whole(median(apart))} (${apart.map(whole).join(', ')}); ${reference ? cells(total) : '–'}` : '–'} | ${whole(median(measured[variant].map((result) => result.wallUsPerReq)))} |`,
    );
  }
  return failed === 0 ? 0 : 1;
}

/** One measurement of `--store-loop`, in its own process: prints one JSON line. */
async function storeLoopOne(variant, requests, group) {
  const dir = mkdtempSync(path.join(tmpdir(), `floor-loop-${variant}-`));
  const file = path.join(dir, 'floor.sqlite');
  const store = openStore(file, { variant });
  const principal = { keyId: 'key', accountId: 'acct' };
  const fingerprint = sha256(LOOP_ANSWER);
  const usage = { prompt_tokens: 12, completion_tokens: 14, total_tokens: 26 };
  const reserve = 6_000;
  const batch = async () => {
    // The client's idempotency keys are random (the harness sends a fresh UUID per request).
    const claimed = await Promise.all(
      Array.from({ length: group }, () =>
        store.claim(
          principal,
          randomUUID(),
          fingerprint,
          '/v1/chat/completions',
          'gpt-4o-mini',
          reserve,
        ),
      ),
    );
    await Promise.all(
      claimed.map((ids) => store.finish(principal, ids, reserve, usage, 200, LOOP_ANSWER)),
    );
  };
  for (let done = 0; done < requests / 10; done += group) await batch();
  const apartBefore = await store.catchUp();
  const cpuBefore = process.cpuUsage();
  const wallBefore = process.hrtime.bigint();
  let done = 0;
  for (; done < requests; done += group) await batch();
  // The read model's work for these requests, within the measured window (the apart projector's
  // in its own process: reported beside, not in this process's CPU).
  const apartAfter = await store.catchUp();
  const cpu = process.cpuUsage(cpuBefore);
  const wall = Number(process.hrtime.bigint() - wallBefore) / 1000;
  await store.close();
  const { clean, figures } = ledgerFigures(file);
  rmSync(dir, { recursive: true, force: true });
  console.log(
    JSON.stringify({
      variant,
      requests: done,
      cpuUsPerReq: (cpu.user + cpu.system) / done,
      projectorCpuUsPerReq: apartAfter ? (apartAfter.cpuUs - apartBefore.cpuUs) / done : 0,
      wallUsPerReq: wall / done,
      clean,
      figures,
    }),
  );
}

// ------------------------------------------------------------------------ the projector's report

/**
 * `--projector-report DIR RESULTS.JSON NAME`: event-log-projected-apart's CPU after a harness run.
 * The harness counts the gateway's process group only; the projector's process wrote its samples
 * (DIR/projector-PID.json, one per round: the harness starts the target afresh every round). Per
 * round, its CPU per request over the max phase (the last `durationSec` before it stopped, which
 * it does when the gateway stops, right after that phase), beside the gateway's, both ÷ the
 * passthrough's and ÷ the other floors' of the same round; and the p99 at each fixed rate.
 */
function projectorReport(dir, resultsFile, name) {
  const { raw } = JSON.parse(readFileSync(resultsFile, 'utf8'));
  const target = raw[name];
  const passthrough = raw['node-passthrough'];
  if (!target || !passthrough) {
    console.log(`  ${name}: not in ${resultsFile}, no projector report`);
    return 1;
  }
  const runs = readdirSync(dir)
    .filter((entry) => /^projector-\d+\.json$/.test(entry))
    .map((entry) => JSON.parse(readFileSync(path.join(dir, entry), 'utf8')))
    .sort((a, b) => a.started - b.started);
  if (runs.length !== target.rounds.length) {
    console.log(
      `  ${name}: ${runs.length} projector runs for ${target.rounds.length} rounds, no projector report`,
    );
    return 1;
  }
  const projectorPerRequest = runs.map((run, round) => {
    const seconds = target.rounds[round].max?.durationSec ?? NaN;
    const end = run.samples.findLast(([at]) => at <= run.stopped - 250) ?? run.samples.at(-1);
    const start = run.samples.findLast(([at]) => at <= end[0] - seconds * 1000) ?? run.samples[0];
    const requests = (end[2] - start[2]) / 2;
    return requests > 0 ? (end[1] - start[1]) / requests : NaN;
  });
  const format = (value) => (Number.isFinite(value) ? value.toFixed(2) : String(value));
  const whole = (value) => (Number.isFinite(value) ? value.toFixed(0) : String(value));
  const cells = (values, show = format) =>
    `${show(median(values))} (${values.map(show).join(', ')})`;
  const perRound = (read) =>
    target.rounds.map((phases, round) => {
      try {
        return read(phases, round);
      } catch {
        return NaN;
      }
    });
  const cpu = (phases) => phases.max.targetCpuUsPerReq;
  const gateway = perRound(cpu);
  const rows = [
    ['gateway CPU µs/req at max (the harness: its process group)', gateway, whole],
    ['projector process CPU µs/req, same window', projectorPerRequest, whole],
  ];
  const against = (label, other) => {
    if (!other) return;
    const base = (round) => cpu(other.rounds[round]);
    rows.push(
      [`gateway ÷ ${label}`, gateway.map((value, round) => value / base(round))],
      [
        `(gateway + projector) ÷ ${label}`,
        gateway.map((value, round) => (value + projectorPerRequest[round]) / base(round)),
      ],
    );
  };
  against('node-passthrough', passthrough);
  against('ledger-floor', raw['ledger-floor']);
  against('ledger-floor-event-log', raw['ledger-floor-event-log']);
  against('ledger-floor-event-log-projected', raw['ledger-floor-event-log-projected']);
  for (const phase of Object.keys(target.rounds[0]).filter((key) => /^rate\d+$/.test(key))) {
    for (const other of [
      'node-passthrough',
      'ledger-floor',
      'ledger-floor-event-log',
      'ledger-floor-event-log-projected',
      name,
    ]) {
      if (!raw[other]) continue;
      rows.push([
        `${other}: p99 at ${phase.slice(4)} req/s (ms)`,
        raw[other].rounds.map((phases) => phases[phase]?.serviceMs?.p99 ?? NaN),
      ]);
    }
  }
  console.log(
    `\n${name}: the request path (the gateway's process) and the projector (its own process), ${target.rounds.length} round(s), median (rounds):\n`,
  );
  console.log('| figure | median (rounds) |\n|---|---|');
  for (const [label, values, show] of rows) console.log(`| ${label} | ${cells(values, show)} |`);
  return 0;
}

/**
 * `--held-report DIR NAME`: per round (one gateway process each, all its phases), how often and
 * how long the projector held the request path (see `held`): the group commits, those held, the
 * p99 and the longest hold, and the time held per 1,000 commits.
 */
function heldReport(dir, name) {
  const runs = readdirSync(dir)
    .filter((entry) => /^held-\d+\.json$/.test(entry))
    .map((entry) => ({
      at: statSync(path.join(dir, entry)).mtimeMs,
      ...JSON.parse(readFileSync(path.join(dir, entry), 'utf8')),
    }))
    .sort((a, b) => a.at - b.at);
  console.log(
    `\n${name}: the request path held by the projector, per round (the whole run of each process)\n`,
  );
  console.log(
    '| round | group commits | held ≥ 0.05 ms | p99 of held (ms) | longest (ms) | ms held per 1,000 commits |',
  );
  console.log('|---|---|---|---|---|---|');
  runs.forEach((run, index) => {
    const sorted = [...run.waitsMs].sort((a, b) => a - b);
    const total = sorted.reduce((sum, ms) => sum + ms, 0);
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
    console.log(
      `| ${index + 1} | ${run.commits} | ${sorted.length} | ${p99.toFixed(2)} | ${(sorted.at(-1) ?? 0).toFixed(2)} | ${((total / Math.max(1, run.commits)) * 1000).toFixed(0)} |`,
    );
  });
  return 0;
}

// ------------------------------------------------------------------------------------ dispatch

const [mode, ...rest] = process.argv.slice(2);
if (path.resolve(process.argv[1] ?? '') !== SELF) {
  // imported (bench/ledger-floor-pg.mjs): nothing to run
} else if (mode === '--check')
  process.exit(checkLedger(path.join(rest[0], 'floor.sqlite'), rest[1]));
else if (mode === '--self-test') process.exit(await selfTest(rest.length > 0 ? rest : VARIANTS));
else if (mode === '--store-loop') process.exit(await storeLoop(parseFlags(rest)));
else if (mode === '--projector') projectorProcess(rest[0]);
else if (mode === '--projector-report') process.exit(projectorReport(rest[0], rest[1], rest[2]));
else if (mode === '--held-report') process.exit(heldReport(rest[0], rest[1]));
else if (mode === '--store-loop-one') {
  await storeLoopOne(rest[0], Number(rest[1]), Number(rest[2]));
  process.exit(0);
} else {
  const variant = mode === '--variant' ? rest[0] : (process.env.FLOOR_VARIANT ?? 'ordered-ids');
  if (!VARIANTS.includes(variant))
    throw new Error(`unknown variant ${variant} (one of ${VARIANTS.join(', ')})`);
  serve(variant);
}
