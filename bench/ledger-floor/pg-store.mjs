// The PostgreSQL floors' store: the lanes that batch claims and finishes, `openStore` (with
// pg-event-log-projected's projector on a connection of its own), and the samples of its backends'
// CPU and the WAL.
import { readFileSync } from 'node:fs';
import { clearInterval, setImmediate, setInterval } from 'node:timers';
import { createIdGenerator } from '../../packages/server/dist/util/effects.js';
import { priced } from './money.mjs';
import { PROJECTED_PER_BATCH, projector } from './pg-projector.mjs';
import { connect, createSchema, VARIANTS } from './pg-schema.mjs';
import { STATEMENTS } from './pg-statements.mjs';

const UNIQUE_VIOLATION = '23505';
const REFUSED = 'FL001';

/**
 * A lane: items queued while its statement runs go in the next batch (one per event-loop turn
 * when idle). A batch the statement refuses or breaks a unique key in is decided item by item,
 * each with the same statement alone: one item's refusal never fails another.
 */
function lane(client, name, text, columnsOf) {
  let queue = [];
  let running = false;
  const run = (items) =>
    client.query({
      name,
      text,
      values: columnsOf(items.map((item) => item.value)),
    });
  async function flush() {
    running = true;
    while (queue.length > 0) {
      const batch = queue;
      queue = [];
      try {
        await run(batch);
        for (const item of batch) item.resolve();
      } catch (error) {
        if (error.code !== UNIQUE_VIOLATION && error.code !== REFUSED) {
          for (const item of batch) item.reject(error);
          continue;
        }
        for (const item of batch) {
          try {
            await run([item]);
            item.resolve();
          } catch (alone) {
            item.reject(
              Object.assign(alone, {
                status: alone.code === UNIQUE_VIOLATION ? 409 : alone.code === REFUSED ? 402 : 502,
              }),
            );
          }
        }
      }
    }
    running = false;
  }
  return (value) =>
    new Promise((resolve, reject) => {
      queue.push({ value, resolve, reject });
      if (!running) {
        running = true;
        setImmediate(flush);
      }
    });
}

const columns = (rows, count) =>
  Array.from({ length: count }, (_, index) => rows.map((row) => row[index]));

/**
 * The floor's PostgreSQL store: `claim` / `finish` as ledger-floor.mjs's (each resolved once its
 * batch's statement has committed), on two connections (one lane each), and for the projected
 * variant the projector on a third, every 50 ms. `samples()`: its backends' CPU and the WAL.
 */
export async function openStore(url, schema, variant) {
  if (!VARIANTS.includes(variant))
    throw new Error(`unknown variant ${variant} (one of ${VARIANTS.join(', ')})`);
  const setup = await connect(url, schema);
  await createSchema(setup, variant);
  const clients = [setup, await connect(url, schema)];
  const ids = createIdGenerator();
  const newId = (prefix) => ids.next(prefix);
  const statements = STATEMENTS[variant];
  const tables = variant === 'pg-ordered-ids';
  const claimLane = lane(clients[0], `floor-claim-${variant}`, statements.claim, (rows) =>
    columns(rows, tables ? 11 : 9),
  );
  const finishLane = lane(clients[1], `floor-finish-${variant}`, statements.finish, (rows) =>
    columns(rows, tables ? 8 : 6),
  );
  let project;
  let projecting;
  let running; // the projector's batches in flight (one at a time on its connection)
  let catchingUp = async () => {};
  if (variant === 'pg-event-log-projected') {
    const client = await connect(url, schema);
    clients.push(client);
    project = projector(client);
    projecting = setInterval(() => {
      running ??= (async () => {
        while ((await project()) === PROJECTED_PER_BATCH);
      })().finally(() => (running = undefined));
    }, 50);
    catchingUp = async () => {
      while (running) await running;
      running = (async () => {
        while ((await project()) > 0);
      })().finally(() => (running = undefined));
      await running;
    };
  }
  const backends = (
    await Promise.all(clients.map((client) => client.query('select pg_backend_pid() pid')))
  ).map((result) => result.rows[0].pid);
  let finished = 0;
  return {
    claim(principal, idempotencyKey, fingerprint, url, model, reserve) {
      const now = Date.now();
      const request = newId('req');
      if (tables) {
        const hold = newId('hold');
        return claimLane([
          request,
          hold,
          newId('jrn'),
          principal.accountId,
          principal.keyId,
          idempotencyKey,
          fingerprint,
          url,
          model,
          reserve,
          now,
        ]).then(() => ({ request, hold }));
      }
      return claimLane([
        request,
        principal.accountId,
        principal.keyId,
        idempotencyKey,
        fingerprint,
        url,
        model,
        reserve,
        now,
      ]).then(() => ({ request }));
    },
    finish(principal, claimed, reserve, usage, status, answer) {
      const amount = priced(usage, reserve);
      const now = Date.now();
      const usageText = JSON.stringify(usage ?? null);
      const row = tables
        ? [claimed.request, claimed.hold, newId('jrn'), amount, status, usageText, answer, now]
        : [claimed.request, amount, status, usageText, answer, now];
      return finishLane(row).then(() => {
        finished += 1;
      });
    },
    /** Applies every event not yet projected (the projected variant; otherwise nothing). */
    async catchUp() {
      await catchingUp();
    },
    /** This store's PostgreSQL backends' CPU (µs, from /proc), the WAL, the requests finished. */
    async sample() {
      const wal = (await setup.query('select pg_current_wal_lsn()::text lsn')).rows[0].lsn;
      return [Date.now(), backendsCpuUs(backends), finished * 2, walBytes(wal)];
    },
    async close() {
      clearInterval(projecting);
      await running;
      await Promise.all(clients.map((client) => client.end()));
    },
  };
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux
function backendsCpuUs(pids) {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {
      return NaN; // PostgreSQL on another machine: not measurable from here
    }
  }
  return (ticks / TICKS_PER_SECOND) * 1e6;
}
const walBytes = (lsn) => {
  const [high, low] = lsn.split('/');
  return Number.parseInt(high, 16) * 2 ** 32 + Number.parseInt(low, 16);
};
