import { openStore } from '../../src/store/database.js';
import { queryPostgres, withPostgres } from '../helpers/postgres-statement.js';
import { cliWithEnv } from '../helpers/processes.js';
import {
  INSTANCES,
  KEY_NOTICE_BOUND_MS,
  LISTENER_RECOVERY_MS,
  STALE_AFTER_MS,
  sleep,
  type Cluster,
} from './cluster.js';
import {
  attemptsWithDisabledKeys,
  disabledKeysRefused,
  ledgerClean,
  moneyConserved,
  noIdempotencyKeyChargedTwice,
  noNegativeBalance,
  noTaskSubmittedTwice,
  recordsSettled,
  successesRecorded,
  type TimeWindow,
  type Violation,
} from './invariants.js';
import { Journal, type Attempt } from './journal.js';
import { seededRandom, type Random } from './random.js';
import { Workload } from './workload.js';

/** The upstream "fault" that only delays a chat's answer: a drained instance still answers it. */
const SLOW_ANSWER = '[sim:delay=300]';

/** The faults the battery injects besides the upstream faults written into prompts. */
export const FAULT_KINDS = ['kill', 'pg_terminate', 'pg_restart', 'redis_restart'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface BatteryOptions {
  readonly seed: number;
  /** kill -9s to reach before the load stops (every other fault kind also happens at least once). */
  readonly kills: number;
  /** Concurrent clients. */
  readonly workers: number;
}

export interface BatteryReport {
  readonly seed: number;
  readonly requests: number;
  readonly kills: number;
  readonly faults: Record<FaultKind, number>;
  readonly upstreamFaults: number;
  /** Instances that exited by themselves (no database at start) and were started again. */
  readonly supervisorRestarts: number;
  readonly outcomes: Record<string, number>;
  readonly violations: Violation[];
  readonly seconds: number;
  /** Of those, under load and faults (the rest: set-up, draining tasks, the sweeper's bound). */
  readonly loadSeconds: number;
  /** Seconds spent in each phase, in order. */
  readonly phases: Record<string, number>;
  /** Attempts with a key disabled more than the bound ago: judged, and excused by a database fault. */
  readonly disabledKeyAttempts: { readonly judged: number; readonly excused: number };
  /** The graceful rolling restart under load, before any fault. */
  readonly rollingRestart: RollingRestartReport;
}

export interface RollingRestartReport {
  /** Each instance's time (ms) from SIGTERM to exit, in the order they were restarted. */
  readonly exitMs: number[];
  /** Attempts sent while it ran, and those of them (without an upstream fault) left unanswered. */
  readonly attempts: number;
  readonly unanswered: number;
  /**
   * Chats and embeddings first sent while it ran (without an upstream fault but a delay) whose last attempt,
   * retries with the same idempotency key included, was still unanswered: a request an instance
   * dropped mid-flight instead of draining it (its record stays `processing`, so every retry is
   * "in progress"). Must be none.
   */
  readonly lost: string[];
}

/**
 * One run: a seeded workload through nginx while a seeded schedule kills instances, terminates
 * their database sessions, "restarts" PostgreSQL and Redis; then the load stops, tasks finish and
 * are settled, the sweeper's stale age passes (a restart sweeps at start) and every invariant is
 * checked. The same seed gives the same choices (timings on a shared machine still differ).
 */
export async function runBattery(
  cluster: Cluster,
  options: BatteryOptions,
): Promise<BatteryReport> {
  const started = Date.now();
  const phases: Record<string, number> = {};
  let phaseStart = started;
  const phase = (name: string) => {
    phases[name] = Math.round((Date.now() - phaseStart) / 100) / 10;
    phaseStart = Date.now();
  };
  const journal = new Journal();
  const workload = new Workload(cluster.base, journal);
  await workload.setUp(seededRandom(options.seed), 3, 5_000_000);
  phase('set-up');

  let stopping = false;
  const sampler = sampleNegativeBalances(cluster.databaseUrl, journal, () => stopping);
  const workers = Array.from({ length: options.workers }, async (_, index) => {
    const random = seededRandom(options.seed * 101 + index + 1);
    while (!stopping) await workload.step(random);
  });
  const faults: Record<FaultKind, number> = {
    kill: 0,
    pg_terminate: 0,
    pg_restart: 0,
    redis_restart: 0,
  };
  const rolling = await restartEachGracefully(cluster);
  phase('rolling restart');
  const schedule = seededRandom(options.seed * 7 + 3);
  const order = shuffled(schedule, [...FAULT_KINDS]);
  // Restarts are not waited for: the next fault may come while an instance is still starting
  // (and may kill it again), as on a real bad day; all of them are up again before the checks.
  const restarts: Promise<void>[] = [];
  // While a database fault lasts, and until every listener may be listening again, a change
  // notice can be missed: the disabled-key check does not judge attempts sent then.
  const noticeGaps: TimeWindow[] = [];
  while (faults.kill < options.kills || FAULT_KINDS.some((kind) => faults[kind] === 0)) {
    await sleep(1_000 + schedule.below(1_500));
    const kind = order.shift() ?? (schedule.next() < 0.75 ? 'kill' : schedule.pick(FAULT_KINDS));
    if (kind === 'kill') restarts.push(cluster.killAndRestart(schedule.below(INSTANCES)));
    else {
      const from = Date.now();
      await inject(cluster, kind, schedule);
      if (kind !== 'redis_restart')
        noticeGaps.push({ from, to: Date.now() + LISTENER_RECOVERY_MS });
    }
    faults[kind] += 1;
  }
  phase('faults');
  await Promise.all(restarts);
  phase('restarts');
  stopping = true;
  await Promise.all(workers);
  phase('last requests');
  const loadEnded = Date.now();

  // Quiet: tasks finish and are settled, then the sweeper's bound passes and an instance
  // restarts (the sweeper runs at start), so nothing may still be `processing` after it.
  await waitForTasks(cluster.databaseUrl);
  phase('tasks');
  await workload.settleAll(seededRandom(options.seed + 99));
  phase('settles');
  await sleep(STALE_AFTER_MS + 500);
  await cluster.killAndRestart(0);
  faults.kill += 1;
  await sleep(1_000);
  await sampler;
  phase('sweeper');

  const store = await openStore({ url: cluster.databaseUrl });
  try {
    const db = store.db;
    const attempts = journal.attempts;
    const cli = await cliWithEnv({ TOLLGATE_DATABASE_URL: cluster.databaseUrl }, 'ledger', 'check');
    const violations = [
      ...(cli.code === 0
        ? []
        : [{ check: 'tollgate ledger check', subject: 'cli', detail: cli.stdout + cli.stderr }]),
      ...(await ledgerClean(db)),
      ...(await moneyConserved(db, attempts)),
      ...(await noIdempotencyKeyChargedTwice(db, attempts)),
      ...noTaskSubmittedTwice(cluster.videoSubmissions),
      ...(await successesRecorded(db, attempts)),
      ...(await recordsSettled(db, Date.now(), STALE_AFTER_MS)),
      ...(await noNegativeBalance(db, journal.negativeBalanceSamples)),
      ...disabledKeysRefused(attempts, KEY_NOTICE_BOUND_MS, noticeGaps),
    ];
    const outcomes: Record<string, number> = {};
    for (const row of await db
      .selectFrom('requests')
      .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
      .groupBy('status')
      .execute())
      outcomes[row.status] = Number(row.count);
    return {
      seed: options.seed,
      requests: attempts.length,
      kills: faults.kill,
      faults,
      upstreamFaults: workload.upstreamFaults,
      supervisorRestarts: cluster.supervisorRestarts.count,
      outcomes,
      violations,
      seconds: Math.round((Date.now() - started) / 1000),
      loadSeconds: Math.round((loadEnded - started) / 1000),
      phases,
      rollingRestart: rollingRestartReport(attempts, rolling),
      disabledKeyAttempts: disabledKeyCounts(attempts, noticeGaps),
    };
  } finally {
    await store.close();
  }
}

/** The report's lines, as the battery prints them. */
export function formatReport(report: BatteryReport): string {
  const faults = Object.entries(report.faults)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
  const outcomes = Object.entries(report.outcomes)
    .map(([status, count]) => `${status} ${count}`)
    .join(', ');
  return [
    `battery: seed ${report.seed}, ${INSTANCES} instances behind nginx, ${report.seconds} s (${report.loadSeconds} s under load)`,
    `requests ${report.requests} (attempts, retries included); records: ${outcomes}`,
    `kills ${report.kills}; faults: ${faults}; upstream faults ${report.upstreamFaults}; restarted after exiting by themselves ${report.supervisorRestarts}`,
    `phases (s): ${Object.entries(report.phases)
      .map(([name, seconds]) => `${name} ${seconds}`)
      .join(', ')}`,
    `rolling restart (SIGTERM, one instance after the other, under load): exits after ${report.rollingRestart.exitMs.join(', ')} ms; ${report.rollingRestart.attempts} attempts meanwhile, ${report.rollingRestart.unanswered} unanswered, ${report.rollingRestart.lost.length} chats and embeddings lost after their retries${report.rollingRestart.lost.length === 0 ? '' : ` (${report.rollingRestart.lost.slice(0, 5).join(', ')})`}`,
    `disabled keys: ${report.disabledKeyAttempts.judged} attempts judged against the ${KEY_NOTICE_BOUND_MS} ms bound, ${report.disabledKeyAttempts.excused} excused (sent during a database fault or within ${LISTENER_RECOVERY_MS} ms after it)`,
    `violations ${report.violations.length}`,
    ...report.violations.slice(0, 20).map((v) => `  ${v.check} ${v.subject}: ${v.detail}`),
  ].join('\n');
}

/**
 * A rolling restart as an operator does one (docs/deploy.md): SIGTERM to each instance in turn,
 * the next only once its replacement is healthy, while the workload runs. The battery's checks
 * afterwards cover it with everything else (nothing lost, nothing charged twice, ledger clean).
 */
async function restartEachGracefully(
  cluster: Cluster,
): Promise<{ exitMs: number[]; window: TimeWindow }> {
  const from = Date.now();
  const exitMs: number[] = [];
  for (let index = 0; index < INSTANCES; index += 1)
    exitMs.push(await cluster.terminateAndRestart(index));
  return { exitMs, window: { from, to: Date.now() } };
}

function disabledKeyCounts(attempts: readonly Attempt[], noticeGaps: readonly TimeWindow[]) {
  const found = attemptsWithDisabledKeys(attempts, KEY_NOTICE_BOUND_MS, noticeGaps);
  return { judged: found.judged.length, excused: found.excused };
}

/** The attempts sent during `window`, and those (without an upstream fault) left unanswered. */
function rollingRestartReport(
  attempts: readonly Attempt[],
  rolling: { exitMs: number[]; window: TimeWindow },
): RollingRestartReport {
  const during = attempts.filter(
    (attempt) => attempt.sentAt >= rolling.window.from && attempt.sentAt <= rolling.window.to,
  );
  const unanswered = during.filter(
    (attempt) => attempt.fault === undefined && [0, 502, 503, 504].includes(attempt.status),
  );
  const first = new Map<string, Attempt>();
  const last = new Map<string, Attempt>();
  for (const attempt of attempts) {
    if (!['chat', 'chat_stream', 'embeddings'].includes(attempt.kind)) continue;
    if (!first.has(attempt.idempotencyKey)) first.set(attempt.idempotencyKey, attempt);
    last.set(attempt.idempotencyKey, attempt);
  }
  const lost = [...first.values()]
    .filter(
      (attempt) =>
        // A slow answer (`[sim:delay=300]`) is the likeliest to be in flight when a restart comes.
        (attempt.fault === undefined || attempt.fault === SLOW_ANSWER) &&
        attempt.sentAt >= rolling.window.from &&
        attempt.sentAt <= rolling.window.to &&
        [0, 409, 502, 503, 504].includes(last.get(attempt.idempotencyKey)?.status ?? 0),
    )
    .map((attempt) => `${attempt.kind} ${attempt.idempotencyKey}`);
  return { exitMs: rolling.exitMs, attempts: during.length, unanswered: unanswered.length, lost };
}

async function inject(cluster: Cluster, kind: Exclude<FaultKind, 'kill'>, random: Random) {
  if (kind === 'pg_terminate') return void (await cluster.terminateGatewaySessions());
  if (kind === 'pg_restart') return cluster.cutDatabase(1_000 + random.below(1_000));
  return cluster.bounceRedis(1_000 + random.below(1_000));
}

/** Until no task is queued or running (at most 30 s: a task left then is reported, not hidden). */
async function waitForTasks(databaseUrl: string): Promise<void> {
  await withPostgres(databaseUrl, async (client) => {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const open = await client.query<{ count: string }>(
        "select count(*) as count from tasks where status in ('queued', 'running')",
      );
      if (Number(open.rows[0]?.count) === 0) return;
      await sleep(500);
    }
  });
}

/**
 * Every 500 ms while the run lasts: any account below zero is written down. Each sample on its
 * own connection (made outside the faults: it goes to PostgreSQL directly, not through the proxy).
 */
async function sampleNegativeBalances(
  databaseUrl: string,
  journal: Journal,
  stopped: () => boolean,
): Promise<void> {
  while (!stopped()) {
    try {
      const negative = await queryPostgres<{ id: string; balance: string; held: string }>(
        databaseUrl,
        'select id, balance, held from accounts where balance < 0 or held < 0 or balance - held < 0',
      );
      for (const row of negative)
        journal.negativeBalanceSamples.push(`${row.id}: balance ${row.balance}, held ${row.held}`);
    } catch {
      // A sample lost to the shared server's load is skipped; the final check reads again.
    }
    await sleep(500);
  }
}

function shuffled<T>(random: Random, items: T[]): T[] {
  for (let index = items.length - 1; index > 0; index -= 1) {
    const other = random.below(index + 1);
    [items[index], items[other]] = [items[other] as T, items[index] as T];
  }
  return items;
}
