// The SQLite floors' read model (the projected variants): its tables, the projector that builds it
// from the event log, and event-log-projected-apart's projector process (spawned by the store, run
// by `ledger-floor.mjs --projector FILE`).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
import { BUSY_TIMEOUT_MS, Database, FLOOR_SCRIPT, PRAGMAS } from './sqlite.mjs';

// The read model of event-log-projected: what listings, statements, retention and the sweeper read,
// written by the projector only, and the sequence it has applied up to.
export const READ_MODEL = `
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

/** The apart projector's batch: the longest the request path's group commit waits for it. */
const PROJECTED_APART_PER_BATCH = 256;

/**
 * event-log-projected-apart: the projector in a child process in its own session (`detached`:
 * outside the gateway's process group, which the harness measures and signals), talking over an
 * IPC channel. It exits when the channel closes, i.e. when this process ends however it ends.
 */
export function spawnProjector(file) {
  const child = spawn(process.execPath, [FLOOR_SCRIPT, '--projector', file], {
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
export function projectorProcess(file) {
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

export const PROJECTED_PER_BATCH = 4096;
/**
 * The projector of the projected variants: applies the events after the sequence it reached, in
 * order, at most `perBatch` in one transaction with the sequence they take it to (so each is
 * applied exactly once). With `readOutside` (the apart projector) it reads the events before its
 * write transaction (a WAL read, which waits for no one) and holds the write lock only to apply
 * them, after checking that the sequence reached is still the one it read from. Returns how many
 * it applied.
 */
export function projector(db, { perBatch = PROJECTED_PER_BATCH, readOutside = false } = {}) {
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
