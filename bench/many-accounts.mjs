// Closed-loop load over many accounts: each connection sends chat completions with the key of
// its own account (connection i uses account i mod N) and a fresh Idempotency-Key per request.
// Shows how accounted throughput depends on how many accounts share the load: on PostgreSQL,
// requests of one account serialise on its balance row through each commit's WAL flush.
//   node bench/many-accounts.mjs --url http://127.0.0.1:18294 --admin-token T --accounts 64
//     [--connections 64] [--seconds 10] [--pid <gateway pid>]
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { parseFlags } from './lib.mjs';

const flags = parseFlags();
const base = flags.url ?? 'http://127.0.0.1:18294';
const accounts = Number(flags.accounts ?? 64);
const connections = Number(flags.connections ?? 64);
const seconds = Number(flags.seconds ?? 10);
const pool = new Pool(base, { connections, pipelining: 1 });
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
  keys.push(key.key);
}

const body = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'Say hello in one short sentence.' }],
  max_tokens: 32,
});
const cpuSeconds = () => {
  if (flags.pid === undefined) return Number.NaN;
  const fields = readFileSync(`/proc/${flags.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const latencies = [];
let errors = 0;
let warm = true;
const end = Date.now() + 2000 + seconds * 1000;
setTimeout(() => (warm = false), 2000);
let cpuStart = 0;
setTimeout(() => (cpuStart = cpuSeconds()), 2000);
await Promise.all(
  Array.from({ length: connections }, async (_, connection) => {
    const authorization = `Bearer ${keys[connection % accounts]}`;
    while (Date.now() < end) {
      const started = performance.now();
      const response = await pool.request({
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
latencies.sort((a, b) => a - b);
const at = (q) =>
  latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
console.log(
  JSON.stringify({
    accounts,
    connections,
    requestsPerSecond: Math.round(latencies.length / seconds),
    p50Ms: Number(at(0.5).toFixed(2)),
    p99Ms: Number(at(0.99).toFixed(2)),
    errors,
    gatewayCpuUsPerRequest: Number.isNaN(cpu) ? null : Math.round((cpu * 1e6) / latencies.length),
  }),
);
await pool.close();
// A failed answer means the figures are not the accounted path's: fail the run.
if (errors > 0 || latencies.length === 0) process.exitCode = 1;
