import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { Projector, type ApplyEvents } from '../../src/events/projector.js';
import { openStore, type Store } from '../../src/store/database.js';
import { manualClock } from '../helpers/clock.js';
import { describeEachDialect, dropSchema, type TestDialect } from '../helpers/dialects.js';
import { appendTestEvent } from '../helpers/events.js';

/**
 * The event log's projector killed by the operating system in the middle of a batch (decision
 * 0019, "Tests first"): a process applying a batch is sent SIGKILL after it wrote the batch's rows
 * and before it committed them; another projector then applies every event exactly once. The child
 * runs the built projector (packages/server/dist, as npm test builds it).
 */

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const EVENTS = 6;

/** The child: appends nothing, applies one batch into `projector_test_applied`, and stops there. */
const CHILD = `
const { openStore } = await import(process.env.DIST_URL + 'store/database.js');
const { Projector } = await import(process.env.DIST_URL + 'events/projector.js');
const { sql } = await import('kysely');
const store = await openStore({ url: process.env.STORE_URL, ...(process.env.SCHEMA ? { postgresSchema: process.env.SCHEMA } : {}) });
const projector = new Projector(store.db, {
  name: 'test-read-model', dialect: store.dialect, clock: { now: () => Date.now() },
  apply: async (trx, events) => {
    for (const event of events)
      await sql\`insert into projector_test_applied (seq) values (\${event.seq})\`.execute(trx);
    process.stdout.write('applied ' + events.length + ' uncommitted\\n');
    await new Promise(() => {}); // killed here, its batch's transaction open
  },
});
// On PostgreSQL another session's open transaction (the server's xmin) can hold the events back
// for a while: a batch that found nothing ready is tried again until it applies.
while ((await projector.applyBatch()) === 0) await new Promise((resolve) => setTimeout(resolve, 50));
`;

function startChild(env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--input-type=module', '-e', CHILD], {
    env: { ...process.env, ...env, DIST_URL: pathToFileURL(DIST).href },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Resolves when the child says it applied its batch without committing it. */
function untilApplied(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`the child never applied: ${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('uncommitted')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the child exited (${code}) before applying: ${output}`));
    });
  });
}

describeEachDialect('a projector killed mid-batch on $name', (dialect: TestDialect) => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it(
    'leaves nothing of its batch, and the next projector applies every event exactly once',
    { timeout: 150_000 },
    async () => {
      const fresh = dialect.fresh();
      let url = fresh.databaseUrl;
      if (dialect.name === 'sqlite') {
        const dir = mkdtempSync(path.join(tmpdir(), 'tollgate-projector-kill-'));
        cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
        url = path.join(dir, 'tollgate.sqlite');
      } else cleanups.push(() => dropSchema(fresh.postgresSchema));
      const open = (): Promise<Store> =>
        openStore({
          url,
          ...(fresh.postgresSchema === undefined ? {} : { postgresSchema: fresh.postgresSchema }),
        });

      const before = await open();
      await sql`create table projector_test_applied (seq bigint primary key)`.execute(before.db);
      const appended: number[] = [];
      for (let index = 0; index < EVENTS; index += 1) {
        appended.push(await appendTestEvent(before.db, `req_${index}`));
      }
      await before.close();

      const child = startChild({ STORE_URL: url, SCHEMA: fresh.postgresSchema ?? '' });
      cleanups.push(() => void child.kill('SIGKILL'));
      await untilApplied(child);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));

      const after = await open();
      cleanups.push(() => after.close());
      const applied = async () =>
        (
          await sql<{ seq: number }>`select seq from projector_test_applied order by seq`.execute(
            after.db,
          )
        ).rows.map((row) => Number(row.seq));
      // Nothing of the killed batch is there, and its cursor did not move.
      expect(await applied()).toEqual([]);
      const apply: ApplyEvents = async (trx, events) => {
        for (const event of events)
          await sql`insert into projector_test_applied (seq) values (${event.seq})`.execute(trx);
      };
      const projector = new Projector(after.db, {
        name: 'test-read-model',
        dialect: after.dialect,
        apply,
        clock: manualClock(),
      });
      // On PostgreSQL the killed backend's transaction ends when the server sees the connection
      // drop; until then the server's xmin holds the events back.
      const deadline = Date.now() + 60_000;
      while ((await applied()).length < EVENTS && Date.now() < deadline) {
        await projector.catchUp();
        if ((await applied()).length < EVENTS)
          await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await applied()).toEqual(appended);
      expect(await projector.catchUp()).toBe(0);
    },
  );
});
