// The accounted path's store work alone, on SQLite: per request the claim (record, hold,
// journal) and the finish (capture, journal, record outcome), with the gateway's own services
// and store (checkpoint worker, group commit), `--concurrency` requests in flight (each waits a
// turn between claim and finish, as for its upstream call). Prints process
// CPU µs per request; `--dist A --dist B` runs each build in its own child process, interleaved
// `--rounds` times, so their figures come from the same minutes of a shared machine.
//
//   node bench/store-path.mjs --dist packages/server/dist-before --dist packages/server/dist
//   node bench/store-path.mjs --requests 20000 --concurrency 32 --rounds 3 --dist ...
//   node bench/store-path.mjs --statements --dist ...   # also each SQL statement's CPU per request
//   node bench/store-path.mjs --pages --requests 5000    # also the pages each COMMIT writes, by B-tree
//   node bench/store-path.mjs --smoke                   # a few hundred requests: still runs (CI)
//
// `--statements` times every statement with process.cpuUsage (a syscall each: the totals grow)
// and checkpoints in the main thread (no checkpoint worker), so that its CPU is the statements'.
// `--pages` stops checkpoints during the measured requests and reads the WAL they wrote: the pages
// each COMMIT writes (every page it dirtied, whole), named by the table or index they belong to.
//
// Ends with the ledger check of each store (a failure exits non-zero).
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { setImmediate } from 'node:timers';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    dist: { type: 'string', multiple: true, default: ['packages/server/dist'] },
    requests: { type: 'string', default: '20000' },
    warmup: { type: 'string', default: '3000' },
    concurrency: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '3' },
    child: { type: 'boolean', default: false },
    statements: { type: 'boolean', default: false },
    pages: { type: 'boolean', default: false },
    smoke: { type: 'boolean', default: false },
  },
});
if (values.smoke) Object.assign(values, { requests: '300', warmup: '50', rounds: '1' });

if (values.child) {
  console.log(JSON.stringify(await measure(path.resolve(values.dist[0]))));
} else {
  const results = new Map(values.dist.map((dist) => [dist, []]));
  for (let round = 0; round < Number(values.rounds); round += 1) {
    for (const dist of values.dist) {
      const args = [process.argv[1], '--child', '--dist', dist, '--requests', values.requests];
      args.push('--warmup', values.warmup, '--concurrency', values.concurrency);
      if (values.statements) args.push('--statements');
      if (values.pages) args.push('--pages');
      const output = execFileSync('taskset', ['-c', '0', process.execPath, ...args], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const result = JSON.parse(output.trim().split('\n').at(-1));
      results.get(dist).push(result);
      console.log(
        `round ${round + 1} ${dist}: ${result.cpuMicrosPerRequest} µs CPU/request (main thread ${result.mainThreadMicrosPerRequest})`,
      );
    }
  }
  const median = (numbers) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)];
  console.log('\n| build | process CPU µs/request, median [rounds] | main thread µs/request |');
  console.log('|---|---:|---:|');
  for (const [dist, list] of results) {
    const process = list.map((result) => result.cpuMicrosPerRequest);
    const main = list.map((result) => result.mainThreadMicrosPerRequest);
    console.log(
      `| ${dist} | ${median(process)} [${process.join(', ')}] | ${median(main)} [${main.join(', ')}] |`,
    );
  }
}

/** The main thread's CPU time (user + system) in clock ticks of 10 ms, from /proc (Linux). */
function mainThreadTicks() {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** Wraps the binding's statements so that each SQL text's CPU time is summed (`--statements`). */
async function timeStatements(load) {
  const { SqliteDatabase } = await load('store/sqlite-binding.js');
  const probe = new SqliteDatabase(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('select 1'));
  probe.close();
  const timings = new Map();
  for (const method of ['run', 'all', 'get']) {
    const original = statement[method];
    statement[method] = function timed(...parameters) {
      const before = process.cpuUsage();
      try {
        return original.apply(this, parameters);
      } finally {
        const used = process.cpuUsage(before);
        const text = this.source.slice(0, 70);
        const timing = timings.get(text) ?? { micros: 0, runs: 0 };
        timing.micros += used.user + used.system;
        timing.runs += 1;
        timings.set(text, timing);
      }
    };
  }
  return timings;
}

/**
 * `--pages`: empties the WAL and stops checkpoints, so that what the measured requests write stays
 * in it; `report` then reads each frame's page number and names its B-tree (SQLite's `dbstat`).
 */
async function watchPages(load, store, directory) {
  const { SqliteDatabase } = await load('store/sqlite-binding.js');
  const { sql } = await import('kysely');
  const file = path.join(directory, 'tollgate.sqlite');
  const statement = Object.getPrototypeOf(new SqliteDatabase(':memory:').prepare('select 1'));
  let commits = 0;
  const run = statement.run;
  statement.run = function counted(...parameters) {
    if (this.source === 'commit') commits += 1;
    return run.apply(this, parameters);
  };
  await sql`pragma wal_autocheckpoint = 0`.execute(store.db);
  const side = new SqliteDatabase(file);
  side.pragma('wal_checkpoint(TRUNCATE)');
  commits = 0;
  return {
    report(requests) {
      const wal = readFileSync(`${file}-wal`);
      const owners = side.prepare('select name, pageno from dbstat').all();
      const owner = new Map(owners.map((row) => [row.pageno, row.name]));
      const written = new Map();
      let frames = 0;
      // A 32-byte header (the page size at byte 8), then frames: a 24-byte header and a page.
      const frame = 24 + wal.readUInt32BE(8);
      for (let offset = 32; offset + frame <= wal.length; offset += frame) {
        const name = owner.get(wal.readUInt32BE(offset)) ?? '(freed)';
        written.set(name, (written.get(name) ?? 0) + 1);
        frames += 1;
      }
      side.close();
      console.error(
        `\n${commits} commits for ${requests} requests; pages written per COMMIT ${(frames / commits).toFixed(1)}, per request ${(frames / requests).toFixed(2)}`,
      );
      for (const [name, count] of [...written].sort((a, b) => b[1] - a[1]))
        console.error(`${(count / commits).toFixed(1).padStart(7)} ${name}`);
    },
  };
}

async function measure(dist) {
  const load = (file) => import(pathToFileURL(path.join(dist, file)).href);
  const { openStore } = await load('store/database.js');
  const { RequestService } = await load('requests/request-service.js');
  const { createIdGenerator, systemClock } = await load('util/effects.js');
  const { checkLedger } = await load('billing/ledger-check.js');
  const { AccountService } = await load('accounts/account-service.js');
  const directory = mkdtempSync(path.join(tmpdir(), 'tollgate-store-path-'));
  const timings = values.statements ? await timeStatements(load) : undefined;
  const store = await openStore({
    url: path.join(directory, 'tollgate.sqlite'),
    checkpointWorker: timings === undefined && !values.pages,
  });
  const ids = createIdGenerator(systemClock);
  const effects = { clock: systemClock, ids };
  const quiet = { warn() {}, info() {} };
  const requests = new RequestService(store.db, effects, 30 * 86_400_000, quiet);
  const accounts = new AccountService(store.db, effects);
  const { id: accountId } = await accounts.create({ email: 'store-path@example.test' });
  await accounts.topUp(accountId, { amount: 10_000_000_000_000, reference: 'store-path' });
  const principal = {
    keyId: ids.next('key'),
    accountId,
    kind: 'service',
    models: null,
    budgeted: false,
  };
  const body = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hello there, how may I help you today?' },
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 },
  };
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  const one = async () => {
    // No read of the key first: the text routes leave a used key to the claim
    // (http/idempotency-judgement.ts).
    const idempotencyKey = randomUUID();
    const identity = {
      requestId: ids.next('req'),
      principal,
      idempotencyKey,
      fingerprint: 'f'.repeat(64),
      method: 'POST',
      path: '/v1/chat/completions',
      model: 'gpt-4o-mini',
    };
    const claim = await requests.claim(identity, { amount: 5_000, priceVersion: 'pv_1' });
    if (claim.kind !== 'claimed') throw new Error(`claim: ${claim.kind}`);
    await turn();
    const answer = await requests.finish(identity, claim.holdId, {
      kind: 'succeeded',
      body,
      usage: { prompt_tokens: 12, completion_tokens: 9 },
      amount: 48,
      pricingRule: 'tokens',
      upstreamRequestId: 'up-1',
    });
    if (answer.status !== 200) throw new Error(`finish: ${answer.status}`);
  };
  const run = async (count) => {
    let left = count;
    const worker = async () => {
      while (left > 0) {
        left -= 1;
        await one();
      }
    };
    await Promise.all(Array.from({ length: Number(values.concurrency) }, worker));
  };
  await run(Number(values.warmup));
  const count = Number(values.requests);
  const pages = values.pages ? await watchPages(load, store, directory) : undefined;
  timings?.clear();
  const cpuBefore = process.cpuUsage();
  const mainBefore = mainThreadTicks();
  const wallBefore = process.hrtime.bigint();
  await run(count);
  const cpu = process.cpuUsage(cpuBefore);
  const mainTicks = mainThreadTicks() - mainBefore;
  if (timings !== undefined) {
    console.error(`\n${dist}: CPU µs per request by statement (runs in brackets)`);
    for (const [text, { micros, runs }] of [...timings].sort((a, b) => b[1].micros - a[1].micros))
      console.error(`${(micros / count).toFixed(1).padStart(7)} [${runs}] ${text}`);
  }
  if (pages !== undefined) pages.report(count);
  const wall = Number(process.hrtime.bigint() - wallBefore) / 1000;
  const ledger = await checkLedger(store.db);
  await store.close();
  rmSync(directory, { recursive: true, force: true });
  if (!ledger.ok) throw new Error(`ledger check failed: ${JSON.stringify(ledger).slice(0, 500)}`);
  return {
    cpuMicrosPerRequest: Math.round((cpu.user + cpu.system) / count),
    mainThreadMicrosPerRequest: Math.round((mainTicks * 10_000) / count),
    wallMicrosPerRequest: Math.round(wall / count),
  };
}
