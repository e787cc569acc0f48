// Preloaded into a gateway (`node --import ./bench/stall-probe.mjs dist/main.js`): records when
// the event loop stood still and what the garbage collector did, with wall-clock stamps, so that a
// latency tail can be laid beside its causes (bench/tail.sh). Writes JSON lines to
// $TOLLGATE_STALL_PROBE (required):
//   {"kind":"stall","at":<ms since epoch>,"ms":<how late a 1 ms timer fired>}  (late by ≥ 2 ms)
//   {"kind":"gc","at":…,"ms":…,"type":"minor"|"major"|"incremental"|"weakcb"}    (every pause)
// A timer firing late is the loop busy (or the process off its core) for that long: every request
// arriving meanwhile waits at least as much.
import { appendFileSync } from 'node:fs';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';
import { setInterval, setTimeout } from 'node:timers';

const file = process.env['TOLLGATE_STALL_PROBE'];
if (file === undefined || file === '') throw new Error('stall-probe: set TOLLGATE_STALL_PROBE');

const lines = [];
const flush = () => {
  if (lines.length > 0) appendFileSync(file, lines.splice(0).join('\n') + '\n');
};
const wall = (monotonic) => performance.timeOrigin + monotonic;

const GC_TYPES = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const type = GC_TYPES[entry.detail?.kind] ?? String(entry.detail?.kind);
    lines.push(JSON.stringify({ kind: 'gc', at: wall(entry.startTime), ms: entry.duration, type }));
  }
}).observe({ entryTypes: ['gc'] });

let expected = performance.now() + 1;
const tick = () => {
  const now = performance.now();
  const late = now - expected;
  if (late >= 2) lines.push(JSON.stringify({ kind: 'stall', at: wall(expected), ms: late }));
  expected = now + 1;
  setTimeout(tick, 1).unref();
};
setTimeout(tick, 1).unref();
setInterval(flush, 1_000).unref();
process.on('exit', flush);
