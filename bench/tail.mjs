// An open-loop load of accounted chats at a fixed rate against one gateway, each request's
// scheduled time and latency kept, then its slow requests laid beside what the gateway's
// stall probe recorded (bench/stall-probe.mjs): how late its event loop ran and its garbage
// collections. What a p99 at a given rate is made of.
//   node bench/tail.mjs --url http://127.0.0.1:18395 --key KEY --probe FILE
//     [--rate 500] [--seconds 60] [--warmup 5] [--connections 64]
// Fails on any answer that is not 200.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { parseFlags } from './lib.mjs';

const flags = parseFlags();
const rate = Number(flags.rate ?? 500);
const seconds = Number(flags.seconds ?? 60);
const warmup = Number(flags.warmup ?? 5);
const pool = new Pool(flags.url, { connections: Number(flags.connections ?? 64) });
const body = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'hello' }],
  max_tokens: 16,
});

async function send() {
  const response = await pool.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: {
      authorization: `Bearer ${flags.key}`,
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
    },
    body,
  });
  await response.body.text();
  if (response.statusCode !== 200) throw new Error(`answer ${response.statusCode}`);
}

/** Sends `count` requests at `rate`, each at its scheduled time; each one's stamp and latency. */
async function load(count) {
  const samples = [];
  const pending = [];
  const start = performance.now() + 20;
  for (let index = 0; index < count; index++) {
    const scheduled = start + (index * 1000) / rate;
    const wait = scheduled - performance.now();
    if (wait > 1) await sleep(wait - 1);
    while (performance.now() < scheduled) {
      // the last millisecond spun, so that requests leave on time
    }
    pending.push(
      send().then(() => {
        // From the scheduled time: a request the client sent late still counts its wait.
        samples.push({ at: performance.timeOrigin + scheduled, ms: performance.now() - scheduled });
      }),
    );
  }
  await Promise.all(pending);
  return samples;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const round = (value) => Math.round(value * 100) / 100;

await load(Math.round(rate * warmup));
const startedAt = Date.now();
const samples = await load(Math.round(rate * seconds));
const endedAt = Date.now();
const latencies = samples.map((sample) => sample.ms).sort((a, b) => a - b);
const p99 = quantile(latencies, 0.99);
console.log(
  `${samples.length} requests at ${rate}/s over ${seconds} s: p50 ${round(quantile(latencies, 0.5))} ms, ` +
    `p99 ${round(p99)} ms, p99.9 ${round(quantile(latencies, 0.999))} ms, max ${round(latencies.at(-1))} ms`,
);

const events = readFileSync(flags.probe, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line))
  .filter((event) => event.at >= startedAt - 1_000 && event.at <= endedAt);
// Every run collects garbage many times: a probe that recorded nothing was not loaded.
if (!events.some((event) => event.kind === 'gc'))
  throw new Error(
    `the stall probe recorded no garbage collection in ${flags.probe}: is it preloaded?`,
  );
const stalls = events.filter((event) => event.kind === 'stall');
const collections = events.filter((event) => event.kind === 'gc');
const sum = (list) => round(list.reduce((total, event) => total + event.ms, 0));
console.log(
  `event loop late by ≥ 2 ms: ${stalls.length} times, ${sum(stalls)} ms in all; ≥ 10 ms: ` +
    `${stalls.filter((event) => event.ms >= 10).length}; garbage collections: ` +
    ['minor', 'major', 'incremental', 'weakcb']
      .map((type) => {
        const ofType = collections.filter((event) => event.type === type);
        return `${type} ${ofType.length} (${sum(ofType)} ms, longest ${round(Math.max(0, ...ofType.map((event) => event.ms)))})`;
      })
      .join(', '),
);

// Slow requests (above the p99) in clusters: a gap of 100 ms or more starts a new one.
const slow = samples.filter((sample) => sample.ms > p99).sort((a, b) => a.at - b.at);
const clusters = [];
for (const sample of slow) {
  const last = clusters.at(-1);
  if (last !== undefined && sample.at - last.end < 100) {
    last.end = Math.max(last.end, sample.at + sample.ms);
    last.requests.push(sample);
  } else clusters.push({ start: sample.at, end: sample.at + sample.ms, requests: [sample] });
}
console.log(
  `\n| cluster at (s) | slow requests | worst (ms) | loop late, longest (ms) | GC in it (ms: types) |`,
);
console.log('|---:|---:|---:|---:|---|');
for (const cluster of clusters.sort((a, b) => b.requests.length - a.requests.length).slice(0, 15)) {
  const within = (event) => event.at >= cluster.start - 50 && event.at <= cluster.end;
  const late = stalls.filter(within);
  const gcs = collections.filter(within);
  const types = [...new Set(gcs.map((event) => event.type))].join('+');
  console.log(
    `| ${round((cluster.start - startedAt) / 1000)} | ${cluster.requests.length} | ` +
      `${round(Math.max(...cluster.requests.map((sample) => sample.ms)))} | ` +
      `${round(Math.max(0, ...late.map((event) => event.ms)))} | ${sum(gcs)}${types ? `: ${types}` : ''} |`,
  );
}
await pool.close();
