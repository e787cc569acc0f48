#!/usr/bin/env node
// The goals of issue 19, judged on one run of the reference harness (bench/goals.sh): Tollgate on
// SQLite against the bare Node passthrough measured in the same run. Each ratio is computed per
// round (the harness rotates the targets' order every round, so a round's figures are side by side)
// and the median over rounds is judged. Every other Tollgate target of the run (PostgreSQL, an
// earlier build) is reported beside with the same ratios and not judged.
// Usage: node bench/goals.mjs results.json [--report-only]   (exit 1 when a goal is missed)
import { readFileSync } from 'node:fs';

const [file, ...flags] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: goals.mjs results.json [--report-only]');
const reportOnly = flags.includes('--report-only');
const { raw } = JSON.parse(readFileSync(file, 'utf8'));
const judged = 'tollgate-sqlite';
const baseline = raw['node-passthrough'];
const direct = raw.direct;
if (!baseline || !direct || !raw[judged])
  throw new Error('results need direct, node-passthrough and tollgate-sqlite');

const rates = Object.keys(baseline.rounds[0])
  .filter((phase) => /^rate\d+$/.test(phase))
  .map((phase) => Number(phase.slice(4)))
  .sort((a, b) => a - b);
/** Latency is judged at 500 req/s (the lowest rate when the run had no 500), holding at the highest. */
const latencyRate = rates.includes(500) ? 500 : rates[0];
const holdRate = rates.at(-1);

const failures = (phase) => (phase.errors ?? 0) + (phase.non2xx ?? 0) + (phase.dropped ?? 0);
const holds = (phase, rate) => phase.rps >= 0.97 * rate && failures(phase) === 0;
const added = (target, round, read) => read(target.rounds[round]) - read(direct.rounds[round]);

/**
 * Each goal: per round, the measured value for a target (given the passthrough's round) and the
 * limit it must meet. `higher` goals must be at least the limit, the others at most.
 */
const goals = [
  {
    name: 'CPU per request at max, ÷ passthrough',
    limit: 2.5,
    value: (target, round) =>
      target.rounds[round].max.targetCpuUsPerReq / baseline.rounds[round].max.targetCpuUsPerReq,
  },
  {
    name: 'max throughput (c=64), ÷ passthrough',
    limit: 0.4,
    higher: true,
    value: (target, round) => target.rounds[round].max.rps / baseline.rounds[round].max.rps,
  },
  {
    name: `holds ${holdRate} req/s with zero errors (1 = yes; judged where the passthrough holds it)`,
    limit: 1,
    higher: true,
    value: (target, round) =>
      holds(baseline.rounds[round][`rate${holdRate}`], holdRate)
        ? Number(holds(target.rounds[round][`rate${holdRate}`], holdRate))
        : 1,
  },
  {
    name: `added p50 at ${latencyRate} req/s, ÷ passthrough's added p50`,
    limit: 2,
    value: (target, round) => {
      const read = (phases) => phases[`rate${latencyRate}`].serviceMs.p50;
      return added(target, round, read) / added(baseline, round, read);
    },
  },
  {
    name: `p99 at ${latencyRate} req/s, minus passthrough's p99 (ms)`,
    limit: 2,
    value: (target, round) =>
      target.rounds[round][`rate${latencyRate}`].serviceMs.p99 -
      baseline.rounds[round][`rate${latencyRate}`].serviceMs.p99,
  },
  {
    name: 'added stream TTFB p50, ÷ passthrough’s added TTFB',
    limit: 1.5,
    value: (target, round) => {
      const read = (phases) => phases.stream.ttfbMs.p50;
      return added(target, round, read) / added(baseline, round, read);
    },
  },
];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
const format = (value) => (Number.isFinite(value) ? value.toFixed(2) : String(value));
// `node-json`, the harness's minimal JSON gateway on node:http + undici (parse, set a field,
// forward, parse the answer for usage): not judged, shown as what any gateway that reads the JSON
// pays before it does any accounting. The ledger floors (bench/ledger-floor.mjs, one target per
// variant): not judged, what the guarantees cost by themselves under each schema.
const FLOORS = [
  'ledger-floor-random-ids',
  'ledger-floor',
  'ledger-floor-keys',
  'ledger-floor-event-log',
  'ledger-floor-event-log-projected',
  'ledger-floor-event-log-projected-apart',
  'ledger-floor-pg',
  'ledger-floor-pg-event-log',
  'ledger-floor-pg-event-log-projected',
];
const targets = [
  ...['node-json', ...FLOORS].filter((name) => raw[name] !== undefined),
  ...Object.keys(raw).filter((name) => name.startsWith('tollgate')),
];
const rounds = baseline.rounds.length;

const header = ['goal', 'limit', ...targets.map((name) => `${name} (median; rounds)`), 'met'];
const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
let missed = 0;
for (const goal of goals) {
  const cells = [];
  let met = true;
  for (const name of targets) {
    // A phase that did not run (a target that failed to start) makes its goal unmet, not a crash.
    const perRound = Array.from({ length: rounds }, (_, round) => {
      try {
        return goal.value(raw[name], round);
      } catch {
        return NaN;
      }
    });
    const value = median(perRound);
    cells.push(`${format(value)} (${perRound.map(format).join(', ')})`);
    if (name === judged) met = goal.higher ? value >= goal.limit : value <= goal.limit; // NaN: unmet
  }
  if (!met) missed += 1;
  lines.push(
    `| ${goal.name} | ${goal.higher ? '≥' : '≤'} ${goal.limit} | ${cells.join(' | ')} | ${met ? 'yes' : '**no**'} |`,
  );
}
const figures = (name) => {
  // A phase where nothing succeeded has no latencies: NaN, printed as such.
  const round = (read) =>
    median(
      raw[name].rounds.map((phases) => {
        try {
          return read(phases) ?? NaN;
        } catch {
          return NaN;
        }
      }),
    );
  return `${name}: max ${round((r) => r.max.rps)} req/s, ${name === 'direct' ? '–' : round((r) => r.max.targetCpuUsPerReq)} µs CPU/req, p50/p99 @${latencyRate} ${format(round((r) => r[`rate${latencyRate}`].serviceMs.p50))} / ${format(round((r) => r[`rate${latencyRate}`].serviceMs.p99))} ms, TTFB p50 ${format(round((r) => r.stream.ttfbMs.p50))} ms`;
};
console.log(
  `\nGoals of issue 19 (${rounds} round(s); judged: ${judged}, against node-passthrough of the same round)\n`,
);
console.log(lines.join('\n'));
for (const table of [besideTheFloor(), floorsAgainstTheOldFloor()]) if (table) console.log(table);
console.log(`\n${['direct', 'node-passthrough', ...targets].map(figures).join('\n')}`);
if (reportOnly) console.log(`\n${missed} goal(s) missed — not judged (--report-only)`);
else if (missed > 0) {
  console.error(`\n${missed} goal(s) missed`);
  process.exit(1);
} else console.log('\nevery goal met');

/**
 * Each floor variant against the floor as it was until 2026-12-05 (ledger-floor-random-ids, a
 * random UUID per row) in the same round, CPU per request at max and max throughput (reported,
 * not judged; bench/RESULTS.md, "The floor corrected").
 */
function floorsAgainstTheOldFloor() {
  const old = raw['ledger-floor-random-ids'];
  const names = FLOORS.filter((name) => name !== 'ledger-floor-random-ids' && raw[name]);
  if (old === undefined || names.length === 0) return '';
  const ratios = [
    ['CPU per request at max, ÷ ledger-floor-random-ids', (phases) => phases.max.targetCpuUsPerReq],
    ['max throughput (c=64), ÷ ledger-floor-random-ids', (phases) => phases.max.rps],
  ];
  const rows = ratios.map(([label, read]) => {
    const cells = names.map((name) => {
      const perRound = raw[name].rounds.map((phases, round) => {
        try {
          return read(phases) / read(old.rounds[round]);
        } catch {
          return NaN;
        }
      });
      return `${format(median(perRound))} (${perRound.map(format).join(', ')})`;
    });
    return `| ${label} | ${cells.join(' | ')} |`;
  });
  return [
    '\nThe floor variants against the old floor, same round (reported, not judged):\n',
    `| ratio | ${names.join(' | ')} |`,
    `|---|${names.map(() => '---').join('|')}|`,
    ...rows,
  ].join('\n');
}

/**
 * Each Tollgate target against ledger-floor of the same round (reported, not judged): what the
 * gateway costs beyond the durable money itself, the part of the path that is Tollgate's to win
 * (bench/RESULTS.md, "The floor of the guarantees").
 */
function besideTheFloor() {
  if (raw['ledger-floor'] === undefined) return '';
  const cpu = (phases) => phases.max.targetCpuUsPerReq;
  const ratios = [
    ['CPU per request at max, ÷ ledger-floor', 'ledger-floor', cpu],
    [
      'added stream TTFB p50, ÷ ledger-floor',
      'ledger-floor',
      (phases) => phases.stream.ttfbMs.p50,
      true,
    ],
    ['CPU per request at max, ÷ ledger-floor-event-log', 'ledger-floor-event-log', cpu],
    [
      'CPU per request at max, ÷ ledger-floor-event-log-projected',
      'ledger-floor-event-log-projected',
      cpu,
    ],
    ['CPU per request at max, ÷ ledger-floor-pg (the PostgreSQL floor)', 'ledger-floor-pg', cpu],
    ['CPU per request at max, ÷ ledger-floor-pg-event-log', 'ledger-floor-pg-event-log', cpu],
  ].filter(([, floorName]) => raw[floorName] !== undefined);
  const names = Object.keys(raw).filter((name) => name.startsWith('tollgate'));
  const rows = ratios.map(([label, floorName, read, overDirect]) => {
    const floor = raw[floorName];
    const cells = names.map((name) => {
      const perRound = raw[name].rounds.map((phases, round) => {
        try {
          if (!overDirect) return read(phases) / read(floor.rounds[round]);
          return added(raw[name], round, read) / added(floor, round, read);
        } catch {
          return NaN;
        }
      });
      return `${format(median(perRound))} (${perRound.map(format).join(', ')})`;
    });
    return `| ${label} | ${cells.join(' | ')} |`;
  });
  return [
    '\nBeside the floor of the guarantees (reported, not judged):\n',
    `| ratio | ${names.join(' | ')} |`,
    `|---|${names.map(() => '---').join('|')}|`,
    ...rows,
  ].join('\n');
}
