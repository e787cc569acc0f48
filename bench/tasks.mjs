// Image/video task benchmark (issue 10): quote throughput against a bare Node passthrough in the
// same run, then N video tasks through create -> worker -> settle -> content, with tasks per
// second, worker lag, the create-to-succeeded time and the gateway's peak memory. Loopback only;
// every loop is bounded in count and time. Usage: node bench/tasks.mjs [--tasks 1000]
// [--seconds 5] [--concurrency 64]; TOLLGATE_DATABASE_URL selects PostgreSQL. See RESULTS.md.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { parseFlags } from './lib.mjs';

const flags = parseFlags();
const TASKS = Number(flags.tasks ?? 1000);
const SECONDS = Number(flags.seconds ?? 5);
const CONCURRENCY = Number(flags.concurrency ?? 64);
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HARNESS = process.env.TOLLGATE_BENCH_HARNESS ?? path.join(REPO, '..', 'shared', 'bench');
const ADMIN = 'bench-admin-token-0123456789';
const work = mkdtempSync(path.join(tmpdir(), 'tollgate-tasks-bench-'));
const children = [];

function start(command, args, env, cpu) {
  const child = spawn('taskset', ['-c', cpu, command, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(child);
  return child;
}

async function waitFor(url) {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    try {
      const response = await request(url);
      await response.body.dump();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`${url} did not start`);
}

/** Closed-loop load: `concurrency` callers, each sending again as soon as answered, for `seconds`. */
async function closedLoop(send, seconds, concurrency) {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const status = await send();
        if (status === 200) done += 1;
        else failed += 1;
      }
    }),
  );
  return { rps: done / seconds, failed };
}

/** Runs `work` over `items` with at most `concurrency` at once. */
async function pool(items, concurrency, work) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

const peakMiB = (pid) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

const p = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)] ?? 0;
};

async function main() {
  // The default configuration (the sim-* models), with rate limits out of the way.
  const { defaultConfig } = await import(
    path.join(REPO, 'packages/server/dist/config/default-config.js')
  );
  writeFileSync(
    path.join(work, 'config.json'),
    JSON.stringify({
      ...defaultConfig,
      limits: {
        requests_per_minute: 100_000_000,
        concurrent_requests: 100_000,
        concurrent_requests_per_account: 100_000,
      },
    }),
  );
  start('node', [path.join(HARNESS, 'mock-upstream.mjs')], { UPSTREAM_PORT: '18000' }, '1');
  start(
    'node',
    [path.join(HARNESS, 'anchors', 'node-proxy.mjs')],
    { PROXY_PORT: '18292', UPSTREAM_URL: 'http://127.0.0.1:18000', PROXY_MODE: 'passthrough' },
    '0',
  );
  const gateway = start(
    'node',
    [path.join(REPO, 'packages/server/dist/main.js')],
    {
      PORT: '18293',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      TOLLGATE_DATA_DIR: work,
      TOLLGATE_CONFIG: path.join(work, 'config.json'),
      TOLLGATE_ADMIN_TOKEN: ADMIN,
    },
    '0',
  );
  await waitFor('http://127.0.0.1:18000/v1/models');
  await waitFor('http://127.0.0.1:18293/healthz');
  const api = async (method, url, body, headers = {}) => {
    const response = await request(`http://127.0.0.1:18293${url}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.body.text();
    return { status: response.statusCode, json: text === '' ? undefined : JSON.parse(text) };
  };
  const admin = { authorization: `Bearer ${ADMIN}` };
  const account = (await api('POST', '/admin/v1/accounts', { email: 'bench@example.test' }, admin))
    .json;
  await api(
    'POST',
    `/admin/v1/accounts/${account.id}/topups`,
    { amount: 1e13, reference: 'b' },
    admin,
  );
  const key = (
    await api('POST', `/admin/v1/accounts/${account.id}/keys`, { kind: 'personal' }, admin)
  ).json.key;
  const auth = { authorization: `Bearer ${key}` };

  // 1. Quote throughput against the bare passthrough, same client, same run.
  const embedBody = JSON.stringify({ model: 'text-embedding-3-small', input: 'hello' });
  const passthrough = await closedLoop(
    async () => {
      const response = await request('http://127.0.0.1:18292/v1/embeddings', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: embedBody,
      });
      await response.body.dump();
      return response.statusCode;
    },
    SECONDS,
    CONCURRENCY,
  );
  const quoteBody = JSON.stringify({
    model: 'sim-video',
    prompt: 'waves',
    seconds: 1,
    size: '320x240',
  });
  const quotes = await closedLoop(
    async () => {
      const response = await request('http://127.0.0.1:18293/v1/videos/quote', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: quoteBody,
      });
      await response.body.dump();
      return response.statusCode;
    },
    SECONDS,
    CONCURRENCY,
  );

  // 2. N video tasks: create, let the worker finish them, settle, read the content.
  const started = performance.now();
  const created = new Map();
  await pool(
    Array.from({ length: TASKS }, (_, index) => index),
    32,
    async () => {
      const response = await api(
        'POST',
        '/v1/videos',
        // One prompt for all: the simulator encodes that clip once and serves it from its cache, so the
        // gateway's task engine is measured, not the simulator's H.264 encoder.
        { model: 'sim-video', prompt: 'clip [sim:task_seconds=0]', seconds: 1, size: '320x240' },
        { ...auth, 'idempotency-key': randomUUID() },
      );
      if (response.status !== 202) throw new Error(`create: ${response.status}`);
      created.set(response.json.id, performance.now());
    },
  );
  const createdIn = (performance.now() - started) / 1000;
  const finished = new Map();
  const deadline = performance.now() + 600_000;
  while (finished.size < TASKS && performance.now() < deadline) {
    const open = [...created.keys()].filter((id) => !finished.has(id));
    await pool(open, 32, async (id) => {
      const task = (await api('GET', `/v1/videos/${id}`, undefined, auth)).json;
      if (task.status === 'succeeded') finished.set(id, { at: performance.now(), task });
      else if (task.status !== 'queued' && task.status !== 'running')
        throw new Error(`task ${id} ${task.status}`);
    });
    if (finished.size < TASKS) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (finished.size < TASKS) throw new Error(`only ${finished.size} of ${TASKS} finished`);
  const allDone = (Math.max(...[...finished.values()].map((entry) => entry.at)) - started) / 1000;
  const latencies = [...finished.entries()].map(([id, entry]) => entry.at - created.get(id));
  const settleStart = performance.now();
  let bytes = 0;
  await pool([...finished.values()], 32, async ({ task }) => {
    const settled = await api(
      'POST',
      `/v1/videos/${task.id}/settle`,
      {
        actual_amount: task.billing.actual_amount,
        price_version: task.billing.price_version,
        confirmation: 'settle_original_approved',
      },
      { ...auth, 'idempotency-key': randomUUID() },
    );
    if (settled.status !== 200) throw new Error(`settle: ${settled.status}`);
    const content = await request(`http://127.0.0.1:18293/v1/videos/${task.id}/content`, {
      headers: auth,
    });
    bytes += (await content.body.arrayBuffer()).byteLength;
    if (content.statusCode !== 200) throw new Error(`content: ${content.statusCode}`);
  });
  const settledIn = (performance.now() - settleStart) / 1000;
  const metrics = await (await request('http://127.0.0.1:18293/metrics')).body.text();
  const ledger = (await api('GET', '/admin/v1/ledger/check', undefined, admin)).json;
  const lagBuckets = [
    ...metrics.matchAll(/tollgate_task_worker_lag_seconds_bucket\{le="([^"]+)"\} (\d+)/g),
  ].map((match) => [Number(match[1]), Number(match[2])]);
  const lagCount = lagBuckets.at(-1)?.[1] ?? 0;
  const lagP99 = lagBuckets.find(([, count]) => count >= lagCount * 0.99)?.[0];
  console.log(
    JSON.stringify(
      {
        store: process.env.TOLLGATE_DATABASE_URL ? 'postgres' : 'sqlite',
        quote_rps: Math.round(quotes.rps),
        passthrough_rps: Math.round(passthrough.rps),
        quote_vs_passthrough: Number((quotes.rps / passthrough.rps).toFixed(2)),
        quote_failures: quotes.failed,
        tasks: TASKS,
        created_per_s: Math.round(TASKS / createdIn),
        finished_per_s: Math.round(TASKS / allDone),
        create_to_succeeded_p50_ms: Math.round(p(latencies, 0.5)),
        create_to_succeeded_p99_ms: Math.round(p(latencies, 0.99)),
        worker_lag_p99_s_bucket: lagP99,
        settle_and_content_per_s: Math.round(TASKS / settledIn),
        content_mib: Number((bytes / 1048576).toFixed(1)),
        gateway_peak_rss_mib: Math.round(peakMiB(gateway.pid)),
        ledger_ok: ledger.ok,
      },
      null,
      2,
    ),
  );
  // A failed answer or a dirty ledger means the figures are not the accounted path's: fail the run.
  if (passthrough.failed > 0 || quotes.failed > 0 || ledger.ok !== true) {
    console.error('benchmark did not measure cleanly: failed answers or a dirty ledger (above)');
    process.exitCode = 1;
  }
}

main()
  .catch((error) => {
    console.error(error);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const child of children) child.kill('SIGTERM');
    rmSync(work, { recursive: true, force: true });
  });
