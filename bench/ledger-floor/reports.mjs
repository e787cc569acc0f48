// The reports printed after a harness run, from its results.json and the sample files the floors
// wrote beside their data: `--projector-report` and `--held-report` (ledger-floor.mjs),
// `--side-report` (ledger-floor-pg.mjs); and the median they and the store loop print.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/**
 * `--projector-report DIR RESULTS.JSON NAME`: event-log-projected-apart's CPU after a harness run.
 * The harness counts the gateway's process group only; the projector's process wrote its samples
 * (DIR/projector-PID.json, one per round: the harness starts the target afresh every round). Per
 * round, its CPU per request over the max phase (the last `durationSec` before it stopped, which
 * it does when the gateway stops, right after that phase), beside the gateway's, both ÷ the
 * passthrough's and ÷ the other floors' of the same round; and the p99 at each fixed rate.
 */
export function projectorReport(dir, resultsFile, name) {
  const { raw } = JSON.parse(readFileSync(resultsFile, 'utf8'));
  const target = raw[name];
  const passthrough = raw['node-passthrough'];
  if (!target || !passthrough) {
    console.log(`  ${name}: not in ${resultsFile}, no projector report`);
    return 1;
  }
  const runs = readdirSync(dir)
    .filter((entry) => /^projector-\d+\.json$/.test(entry))
    .map((entry) => JSON.parse(readFileSync(path.join(dir, entry), 'utf8')))
    .sort((a, b) => a.started - b.started);
  if (runs.length !== target.rounds.length) {
    console.log(
      `  ${name}: ${runs.length} projector runs for ${target.rounds.length} rounds, no projector report`,
    );
    return 1;
  }
  const projectorPerRequest = runs.map((run, round) => {
    const seconds = target.rounds[round].max?.durationSec ?? NaN;
    const end = run.samples.findLast(([at]) => at <= run.stopped - 250) ?? run.samples.at(-1);
    const start = run.samples.findLast(([at]) => at <= end[0] - seconds * 1000) ?? run.samples[0];
    const requests = (end[2] - start[2]) / 2;
    return requests > 0 ? (end[1] - start[1]) / requests : NaN;
  });
  const format = (value) => (Number.isFinite(value) ? value.toFixed(2) : String(value));
  const whole = (value) => (Number.isFinite(value) ? value.toFixed(0) : String(value));
  const cells = (values, show = format) =>
    `${show(median(values))} (${values.map(show).join(', ')})`;
  const perRound = (read) =>
    target.rounds.map((phases, round) => {
      try {
        return read(phases, round);
      } catch {
        return NaN;
      }
    });
  const cpu = (phases) => phases.max.targetCpuUsPerReq;
  const gateway = perRound(cpu);
  const rows = [
    ['gateway CPU µs/req at max (the harness: its process group)', gateway, whole],
    ['projector process CPU µs/req, same window', projectorPerRequest, whole],
  ];
  const against = (label, other) => {
    if (!other) return;
    const base = (round) => cpu(other.rounds[round]);
    rows.push(
      [`gateway ÷ ${label}`, gateway.map((value, round) => value / base(round))],
      [
        `(gateway + projector) ÷ ${label}`,
        gateway.map((value, round) => (value + projectorPerRequest[round]) / base(round)),
      ],
    );
  };
  against('node-passthrough', passthrough);
  against('ledger-floor', raw['ledger-floor']);
  against('ledger-floor-event-log', raw['ledger-floor-event-log']);
  against('ledger-floor-event-log-projected', raw['ledger-floor-event-log-projected']);
  for (const phase of Object.keys(target.rounds[0]).filter((key) => /^rate\d+$/.test(key))) {
    for (const other of [
      'node-passthrough',
      'ledger-floor',
      'ledger-floor-event-log',
      'ledger-floor-event-log-projected',
      name,
    ]) {
      if (!raw[other]) continue;
      rows.push([
        `${other}: p99 at ${phase.slice(4)} req/s (ms)`,
        raw[other].rounds.map((phases) => phases[phase]?.serviceMs?.p99 ?? NaN),
      ]);
    }
  }
  console.log(
    `\n${name}: the request path (the gateway's process) and the projector (its own process), ${target.rounds.length} round(s), median (rounds):\n`,
  );
  console.log('| figure | median (rounds) |\n|---|---|');
  for (const [label, values, show] of rows) console.log(`| ${label} | ${cells(values, show)} |`);
  return 0;
}

/**
 * `--held-report DIR NAME`: per round (one gateway process each, all its phases), how often and
 * how long the projector held the request path (see `held`): the group commits, those held, the
 * p99 and the longest hold, and the time held per 1,000 commits.
 */
export function heldReport(dir, name) {
  const runs = readdirSync(dir)
    .filter((entry) => /^held-\d+\.json$/.test(entry))
    .map((entry) => ({
      at: statSync(path.join(dir, entry)).mtimeMs,
      ...JSON.parse(readFileSync(path.join(dir, entry), 'utf8')),
    }))
    .sort((a, b) => a.at - b.at);
  console.log(
    `\n${name}: the request path held by the projector, per round (the whole run of each process)\n`,
  );
  console.log(
    '| round | group commits | held ≥ 0.05 ms | p99 of held (ms) | longest (ms) | ms held per 1,000 commits |',
  );
  console.log('|---|---|---|---|---|---|');
  runs.forEach((run, index) => {
    const sorted = [...run.waitsMs].sort((a, b) => a - b);
    const total = sorted.reduce((sum, ms) => sum + ms, 0);
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
    console.log(
      `| ${index + 1} | ${run.commits} | ${sorted.length} | ${p99.toFixed(2)} | ${(sorted.at(-1) ?? 0).toFixed(2)} | ${((total / Math.max(1, run.commits)) * 1000).toFixed(0)} |`,
    );
  });
  return 0;
}

/**
 * `--side-report DIR RESULTS.JSON NAME`: per round of NAME in the harness's results, over the max
 * phase (the last `durationSec` before the gateway stopped): the gateway's CPU per request (the
 * harness's), its PostgreSQL backends' CPU per request, WAL bytes per request (the whole server's:
 * anything else writing at the time is counted too).
 */
export function sideReport(dir, resultsFile, name) {
  const { raw } = JSON.parse(readFileSync(resultsFile, 'utf8'));
  const target = raw[name];
  const passthrough = raw['node-passthrough'];
  if (!target || !passthrough) return (console.log(`  ${name}: not in ${resultsFile}`), 1);
  const runs = readdirSync(dir)
    .filter((entry) => /^pg-side-\d+\.json$/.test(entry))
    .map((entry) => JSON.parse(readFileSync(path.join(dir, entry), 'utf8')))
    .sort((x, y) => x.started - y.started);
  if (runs.length !== target.rounds.length)
    return (
      console.log(`  ${name}: ${runs.length} sample files for ${target.rounds.length} rounds`),
      1
    );
  const windows = runs.map((run, round) => {
    const seconds = target.rounds[round].max?.durationSec ?? NaN;
    const end = run.samples.findLast(([at]) => at <= run.stopped - 250) ?? run.samples.at(-1);
    const start = run.samples.findLast(([at]) => at <= end[0] - seconds * 1000) ?? run.samples[0];
    const requests = (end[2] - start[2]) / 2;
    return { pgCpu: (end[1] - start[1]) / requests, wal: (end[3] - start[3]) / requests };
  });
  const format = (value) => (Number.isFinite(value) ? value.toFixed(2) : String(value));
  const whole = (value) => (Number.isFinite(value) ? value.toFixed(0) : String(value));
  const cells = (values, show = format) =>
    `${show(median(values))} (${values.map(show).join(', ')})`;
  const cpu = (other, round) => other.rounds[round].max.targetCpuUsPerReq;
  const gateway = target.rounds.map((_, round) => cpu(target, round));
  const rows = [
    ['gateway CPU µs/req at max', gateway, whole],
    ['its PostgreSQL backends, CPU µs/req, same window', windows.map((w) => w.pgCpu), whole],
    ['WAL bytes/req, same window (the whole server)', windows.map((w) => w.wal), whole],
    ['gateway ÷ node-passthrough', gateway.map((value, round) => value / cpu(passthrough, round))],
  ];
  for (const other of ['tollgate-postgres', 'ledger-floor', 'ledger-floor-pg'])
    if (raw[other] && other !== name)
      rows.push([
        `gateway ÷ ${other}`,
        gateway.map((value, round) => value / cpu(raw[other], round)),
      ]);
  for (const phase of Object.keys(target.rounds[0]).filter((key) => /^rate\d+$/.test(key)))
    rows.push([
      `p99 at ${phase.slice(4)} req/s (ms)`,
      target.rounds.map((phases) => phases[phase]?.serviceMs?.p99 ?? NaN),
    ]);
  console.log(`\n${name} (${target.rounds.length} round(s)), median (rounds):\n`);
  console.log('| figure | median (rounds) |\n|---|---|');
  for (const [label, values, show] of rows) console.log(`| ${label} | ${cells(values, show)} |`);
  return 0;
}
