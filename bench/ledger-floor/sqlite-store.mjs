// The SQLite floors' store: `openStore`, a variant's schema on a file with its pragmas, the
// checkpoint thread, the group commit, its money (tables or event log) and its projector.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import { Worker } from 'node:worker_threads';
// Tollgate's id generator: the built one, as the other benchmark scripts use (bench/goals.sh
// builds first).
import { createIdGenerator } from '../../packages/server/dist/util/effects.js';
import { INITIAL_BALANCE } from './money.mjs';
import {
  ACCOUNTS,
  BUSY_TIMEOUT_MS,
  Database,
  PRAGMAS,
  sqliteBindingPath,
  VARIANTS,
} from './sqlite.mjs';
import { EVENT_LOG, eventLogMoney } from './sqlite-event-log.mjs';
import { groupCommitter, noteHeld } from './sqlite-group-commit.mjs';
import { PROJECTED_PER_BATCH, projector, READ_MODEL, spawnProjector } from './sqlite-projector.mjs';
import { LISTING_INDEXES, TABLES, tableMoney } from './sqlite-tables.mjs';

/**
 * The floor's store on `file`: the schema of `variant`, its pragmas, the checkpoint thread, and
 * `claim` / `finish`, each resolved only once its group's COMMIT is done.
 */
export function openStore(file, { variant, indexes = true }) {
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
