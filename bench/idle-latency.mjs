// Sequential accounted requests, one at a time with a pause between them, against each target in
// turn: the latency of a request that finds every process idle (nothing to batch, nothing queued),
// which is what the round trips of the accounted path cost by themselves. Targets are probed
// interleaved, round by round, so that a change of the machine's pace hits all of them alike.
//   node bench/idle-latency.mjs --targets name=url|key,name=url|key [--requests 400] [--gap-ms 5]
//     [--rounds 2] [--baseline node-passthrough]
// Prints p50/p90/p99 per target (median over rounds) and the added p50/p99 over the baseline.
// Fails on any answer that is not 200.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { parseFlags } from './lib.mjs';

const flags = parseFlags();
const requests = Number(flags.requests ?? 400);
const gapMs = Number(flags['gap-ms'] ?? 5);
const rounds = Number(flags.rounds ?? 2);
const baseline = flags.baseline ?? 'node-passthrough';
const targets = (flags.targets ?? '')
  .split(',')
  .filter(Boolean)
  .map((spec) => {
    const [name, rest] = spec.split('=');
    const [url, key] = rest.split('|');
    return { name, url, key, pool: new Pool(url, { connections: 1 }), rounds: [] };
  });
const body = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: 'hello' }],
  max_tokens: 16,
});

async function probe(target) {
  const times = [];
  for (let index = 0; index < requests; index++) {
    const started = performance.now();
    const response = await target.pool.request({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${target.key}`,
        'idempotency-key': randomUUID(),
      },
      body,
    });
    const text = await response.body.text();
    if (response.statusCode !== 200)
      throw new Error(`${target.name}: ${response.statusCode} ${text.slice(0, 200)}`);
    times.push(performance.now() - started);
    await sleep(gapMs);
  }
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99) };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
};

for (let round = 1; round <= rounds; round++) {
  for (const target of targets) {
    const result = await probe(target);
    target.rounds.push(result);
    console.log(
      `[round ${round}/${rounds}] ${target.name}: p50 ${result.p50.toFixed(2)} p90 ${result.p90.toFixed(2)} p99 ${result.p99.toFixed(2)} ms`,
    );
  }
}
const summary = Object.fromEntries(
  targets.map((target) => [
    target.name,
    Object.fromEntries(
      ['p50', 'p90', 'p99'].map((q) => [q, median(target.rounds.map((r) => r[q]))]),
    ),
  ]),
);
const base = summary[baseline];
console.log(
  `\n${requests} sequential requests per round, ${gapMs} ms apart; medians of ${rounds} round(s)\n`,
);
console.log(`| target | p50 / p90 / p99 (ms) | added p50 / p99 over ${baseline} (ms) |`);
console.log('|---|---|---|');
for (const [name, { p50, p90, p99 }] of Object.entries(summary)) {
  const added =
    base === undefined || name === baseline
      ? '–'
      : `+${(p50 - base.p50).toFixed(2)} / +${(p99 - base.p99).toFixed(2)}`;
  console.log(`| ${name} | ${p50.toFixed(2)} / ${p90.toFixed(2)} / ${p99.toFixed(2)} | ${added} |`);
}
await Promise.all(targets.map((target) => target.pool.close()));
