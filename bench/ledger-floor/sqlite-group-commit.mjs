// The SQLite floors' group commit (every write of one event-loop turn in one transaction), and the
// measure of how long the projector held the request path, which `--held-report` reads.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setImmediate } from 'node:timers';

/**
 * How long the projector held the request path, for `--held-report`: with the projector apart,
 * each group commit's BEGIN IMMEDIATE that waited (in SQLite's busy handler) for its batch; with it
 * in the process, each batch (it runs on the event loop, so nothing else does meanwhile). Every
 * such wait of at least HELD_AT_LEAST_MS, and how many group commits there were.
 */
const held = { commits: 0, waitsMs: [] };
const HELD_AT_LEAST_MS = 0.05;
export const noteHeld = (started) => {
  const ms = performance.now() - started;
  if (ms >= HELD_AT_LEAST_MS) held.waitsMs.push(Math.round(ms * 1000) / 1000);
};

/** Group commit: every write of one event-loop turn in one transaction, each in its savepoint. */
export function groupCommitter(db) {
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

/** The SQLite gateway's exit: what the projector held it for (`--held-report`), beside the data. */
export function writeHeld(dir) {
  process.prependListener('SIGTERM', () =>
    writeFileSync(path.join(dir, `held-${process.pid}.json`), JSON.stringify(held)),
  );
}
