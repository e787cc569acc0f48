#!/usr/bin/env node
// Summarises a `node --cpu-prof` profile of the gateway by component: the CPU time of the samples
// taken between --from and --to (CLOCK_MONOTONIC microseconds, the clock V8's profiler and
// process.hrtime share), divided by the requests the load client completed in that window.
// Self time only: each sample counts for the function it landed in (a builtin such as JSON.parse
// counts for its JavaScript caller). Exits 1 when the load answered anything but 2xx.
// The gateway's worker threads (the SQLite WAL checkpointer) write profiles of their own: their
// busy time in the window is reported on one line of its own.
// Usage: node bench/profile-summary.mjs --profile-dir DIR --load load.json --from US --to US [--top 25]
//   [--outside 'claim and finish transactions (store, ledger, records)']  (top functions of the other components)
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseFlags } from './lib.mjs';

const flags = parseFlags();
// File names are CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile; thread 0 is the main one.
const files = readdirSync(flags['profile-dir']).filter((file) => file.endsWith('.cpuprofile'));
const mainFile = files.find((file) => file.split('.')[4] === '0');
if (mainFile === undefined) throw new Error(`no main-thread profile in ${flags['profile-dir']}`);
const readProfile = (file) =>
  JSON.parse(readFileSync(path.join(flags['profile-dir'], file), 'utf8'));
const profile = readProfile(mainFile);
const load = JSON.parse(readFileSync(flags.load, 'utf8'));
const from = Number(flags.from);
const to = Number(flags.to);

/** Components in the order a request meets them; the first rule whose test matches wins. */
const components = [
  ['garbage collection', (url, name) => name === '(garbage collector)'],
  ['idle', (url, name) => name === '(idle)'],
  ['V8 and native (program)', (url, name) => name === '(program)' || name === '(root)'],
  ['connection guard', (url) => url.includes('/dist/http/connection-guard.')],
  ['authentication', (url) => /\/dist\/(http\/plugins\/authenticate|auth\/)/.test(url)],
  [
    'body parse, depth scan, validation',
    (url) =>
      /\/dist\/(http\/plugins\/json-body|chat\/|util\/json-shape)|node_modules\/(ajv|secure-json-parse|fast-uri)\//.test(
        url,
      ),
  ],
  [
    'rate limits and fair queue',
    (url) =>
      /\/dist\/(http\/plugins\/rate-limit|providers\/upstream-admission)|rate-limiter-flexible/.test(
        url,
      ),
  ],
  [
    'claim and finish transactions (store, ledger, records)',
    (url) =>
      /\/dist\/(store|billing|requests)\/|node_modules\/(kysely|better-sqlite3|pg)/.test(url),
  ],
  [
    'upstream request and response',
    (url) => /\/dist\/providers\/|node_modules\/undici\//.test(url),
  ],
  [
    'logging and redaction',
    (url) =>
      /\/dist\/(logger|log-redaction)\.|node_modules\/(pino|sonic-boom|thread-stream)/.test(url),
  ],
  ['metrics', (url) => /\/dist\/http\/metrics\.|node_modules\/prom-client/.test(url)],
  ['serialisation', (url) => /node_modules\/fast-json-stringify/.test(url)],
  [
    'Fastify (routing, hooks, reply)',
    (url) => /node_modules\/(fastify|find-my-way|avvio|@fastify)\//.test(url),
  ],
  ['crypto (ids, key hash)', (url) => url.startsWith('node:internal/crypto')],
  [
    'Node HTTP and sockets',
    (url) => /^node:(_http|net|internal\/(http|stream|streams|net))/.test(url),
  ],
  ['other gateway code', (url) => url.includes('/dist/')],
  ['other Node internals', (url) => url.startsWith('node:')],
  ['other libraries', () => true],
];

console.log(
  `window: ${((from - profile.startTime) / 1e6).toFixed(2)} s to ${((to - profile.startTime) / 1e6).toFixed(2)} s of the profile`,
);
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const byComponent = new Map(components.map(([name]) => [name, 0]));
const byFunction = new Map();
let time = profile.startTime;
for (let index = 0; index < profile.samples.length; index += 1) {
  time += profile.timeDeltas[index];
  if (time < from || time > to) continue;
  const sampleMicros = profile.timeDeltas[index + 1] ?? 0;
  const { callFrame } = nodes.get(profile.samples[index]);
  // A copy of the build (`bench/profile.sh --dist packages/server/dist-before`) is the same code.
  const url = (callFrame.url ?? '').replace(/\/dist-[^/]+\//, '/dist/');
  const name = callFrame.functionName || '(anonymous)';
  const component = components.find(([, test]) => test(url, name))[0];
  byComponent.set(component, byComponent.get(component) + sampleMicros);
  const where = `${name} ${url.replace(/^.*\/(dist|node_modules)\//, '$1/')}:${callFrame.lineNumber + 1}`;
  if (component !== flags.outside)
    byFunction.set(where, {
      component,
      micros: (byFunction.get(where)?.micros ?? 0) + sampleMicros,
    });
}

/** Busy (non-idle) microseconds of a profile's samples inside the window. */
function busyInWindow(other) {
  const idle = new Set(
    other.nodes.filter((node) => node.callFrame.functionName === '(idle)').map((node) => node.id),
  );
  let at = other.startTime;
  let busyMicros = 0;
  other.samples.forEach((sample, index) => {
    at += other.timeDeltas[index];
    if (at >= from && at <= to && !idle.has(sample)) busyMicros += other.timeDeltas[index + 1] ?? 0;
  });
  return busyMicros;
}
const workerMicros = files
  .filter((file) => file !== mainFile)
  .reduce((sum, file) => sum + busyInWindow(readProfile(file)), 0);

const requests = load.ok ?? 0;
const failed = (load.errors ?? 0) + (load.non2xx ?? 0);
const busy = [...byComponent]
  .filter(([name]) => name !== 'idle')
  .reduce((sum, [, us]) => sum + us, 0);
const perRequest = (micros) => (requests === 0 ? 0 : micros / requests);
console.log(
  `requests in the window: ${requests} (${failed} failed); main thread CPU per request: ${perRequest(busy).toFixed(0)} µs; worker threads ${perRequest(workerMicros).toFixed(1)} µs\n`,
);
console.log('| component | µs per request | share |\n|---|---:|---:|');
for (const [name, micros] of [...byComponent].sort((a, b) => b[1] - a[1])) {
  if (name === 'idle' || micros === 0) continue;
  console.log(
    `| ${name} | ${perRequest(micros).toFixed(1)} | ${((100 * micros) / busy).toFixed(1)}% |`,
  );
}
console.log(
  `\nTop functions (self time)${flags.outside === undefined ? '' : `, outside "${flags.outside}"`}:\n\n| function | component | µs per request |\n|---|---|---:|`,
);
const top = Number(flags.top ?? 25);
for (const [where, { component, micros }] of [...byFunction]
  .filter(([where]) => !where.startsWith('(idle)'))
  .sort((a, b) => b[1].micros - a[1].micros)
  .slice(0, top)) {
  console.log(`| \`${where}\` | ${component} | ${perRequest(micros).toFixed(1)} |`);
}
if (failed > 0 || requests === 0) {
  console.error('the load did not measure cleanly: failed answers or none at all');
  process.exitCode = 1;
}
