// Closed-loop load over many accounts: each connection sends chat completions with the key of
// its own account (connection i uses account i mod N) and a fresh Idempotency-Key per request.
// Shows how accounted throughput depends on how many accounts share the load: on PostgreSQL,
// requests of one account serialise on its balance row through each commit's WAL flush.
//   node bench/many-accounts.mjs --url http://127.0.0.1:18294 --admin-token T --accounts 64
//     [--connections 64] [--seconds 10] [--pid <gateway pid>]
//     --url A,B,C --pid a,b,c      several instances of one store: each connection's requests
//                                  go round the instances (the accounts are made through the
//                                  first); the CPU figure is all instances' together
//     [--pg-url postgres://...]   commits and WAL syncs per request (pg_stat_database, pg_stat_wal)
//     [--counts FILE]             statements per request (bench/count-pg-statements.mjs's file)
//     [--key-budget N]            a daily budget of N micro-yuan on every key (one that never
//                                 binds: the key budgets' path is measured, not their refusals)
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Pool } from 'undici';
import { parseFlags } from './lib.mjs';

const flags = parseFlags();
const bases = (flags.url ?? 'http://127.0.0.1:18294').split(',');
const accounts = Number(flags.accounts ?? 64);
const connections = Number(flags.connections ?? 64);
const seconds = Number(flags.seconds ?? 10);
const pools = bases.map(
  (base) => new Pool(base, { connections: Math.ceil(connections / bases.length), pipelining: 1 }),
);
const pool = pools[0];
const admin = {
  authorization: `Bearer ${flags['admin-token']}`,
  'content-type': 'application/json',
};

async function call(method, path, headers, body) {
  const response = await pool.request({ method, path, headers, body: JSON.stringify(body) });
  const text = await response.body.text();
  if (response.statusCode >= 300)
    throw new Error(`${method} ${path}: ${response.statusCode} ${text}`);
  return JSON.parse(text);
}

const keys = [];
const stamp = Date.now();
for (let index = 0; index < accounts; index += 1) {
  const account = await call('POST', '/admin/v1/accounts', admin, {
    email: `many-${stamp}-${index}@example.test`,
  });
  await call('POST', `/admin/v1/accounts/${account.id}/topups`, admin, {
    amount: 900_000_000_000,
    reference: `bench-${index}`,
  });
  const key = await call('POST', `/admin/v1/accounts/${account.id}/keys`, admin, {
    kind: 'service',
    name: 'bench',
  });
  if (flags['key-budget'] !== undefined)
    await call('PUT', `/admin/v1/keys/${key.id}/budget`, admin, {
      limit: Number(flags['key-budget']),
      window: 'daily',
    });
  keys.push(key.key);
}

const body = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Say hello in one short sentence.' }],
  max_tokens: 32,
});
const cpuSeconds = () => {
  if (flags.pid === undefined) return Number.NaN;
  let total = 0;
  for (const pid of String(flags.pid).split(',')) {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    total += (Number(fields[11]) + Number(fields[12])) / 100;
  }
  return total;
};
// PostgreSQL's counters: this database's commits (only the gateway uses it), the server's WAL
// syncs. Backends report them about once a second, so a phase's figures are about right.
const pgClient = flags['pg-url'] ? new pg.Client({ connectionString: flags['pg-url'] }) : null;
await pgClient?.connect();
const pgCounters = async () => {
  if (pgClient === null) return null;
  const { rows } = await pgClient.query(
    `select (select xact_commit from pg_stat_database where datname = current_database()) as commits,
       (select wal_sync from pg_stat_wal) as syncs, (select wal_records from pg_stat_wal) as records`,
  );
  return {
    commits: Number(rows[0].commits),
    syncs: Number(rows[0].syncs),
    records: Number(rows[0].records),
  };
};
const statementCounts = () => {
  if (!flags.counts) return null;
  try {
    return JSON.parse(readFileSync(flags.counts, 'utf8'));
  } catch {
    return null;
  }
};
const latencies = [];
let errors = 0;
let warm = true;
const end = Date.now() + 2000 + seconds * 1000;
setTimeout(() => (warm = false), 2000);
let cpuStart = 0;
let pgStart = null;
let countsStart = null;
setTimeout(() => {
  cpuStart = cpuSeconds();
  countsStart = statementCounts();
  void pgCounters().then((counters) => (pgStart = counters));
}, 2000);
await Promise.all(
  Array.from({ length: connections }, async (_, connection) => {
    const authorization = `Bearer ${keys[connection % accounts]}`;
    // Each connection's requests go round the instances, so every account meets all of them.
    let sent = connection;
    while (Date.now() < end) {
      const started = performance.now();
      sent += 1;
      const response = await pools[sent % pools.length].request({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: {
          authorization,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        },
        body,
      });
      await response.body.dump();
      if (warm) continue;
      if (response.statusCode === 200) latencies.push(performance.now() - started);
      else errors += 1;
    }
  }),
);
const cpu = cpuSeconds() - cpuStart;
const pgEnd = await pgCounters();
await pgClient?.end();
const perRequest = (value) => Number((value / Math.max(1, latencies.length)).toFixed(2));
const postgres =
  pgStart === null || pgEnd === null
    ? {}
    : {
        commitsPerRequest: perRequest(pgEnd.commits - pgStart.commits),
        walSyncsPerRequest: perRequest(pgEnd.syncs - pgStart.syncs),
        walRecordsPerRequest: perRequest(pgEnd.records - pgStart.records),
      };
// The counting preload writes its file every 200 ms: wait for the last figures of the phase.
await new Promise((resolve) => setTimeout(resolve, flags.counts ? 300 : 0));
const countsEnd = statementCounts();
const statements =
  countsStart === null || countsEnd === null
    ? {}
    : {
        statementsPerRequest: Object.fromEntries(
          Object.entries(countsEnd)
            .map(([text, count]) => [text, perRequest(count - (countsStart[text] ?? 0))])
            .filter(([, count]) => count > 0),
        ),
      };
latencies.sort((a, b) => a - b);
const at = (q) =>
  latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
console.log(
  JSON.stringify({
    instances: pools.length,
    accounts,
    keyBudget: flags['key-budget'] !== undefined,
    connections,
    requestsPerSecond: Math.round(latencies.length / seconds),
    p50Ms: Number(at(0.5).toFixed(2)),
    p99Ms: Number(at(0.99).toFixed(2)),
    errors,
    gatewayCpuUsPerRequest: Number.isNaN(cpu) ? null : Math.round((cpu * 1e6) / latencies.length),
    ...postgres,
    ...statements,
  }),
);
await Promise.all(pools.map((instancePool) => instancePool.close()));
// A failed answer means the figures are not the accounted path's: fail the run.
if (errors > 0 || latencies.length === 0) process.exitCode = 1;
