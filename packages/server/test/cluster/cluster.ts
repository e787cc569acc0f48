import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { countingProxy } from '../helpers/counting-proxy.js';
import { createScratchDatabase, queryPostgres } from '../helpers/postgres-statement.js';
import { freePort } from '../helpers/processes.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { startNginx, type RunningNginx } from './nginx.js';
import { startPrivateRedis, type PrivateRedis } from './redis-server.js';

const main = new URL('../../dist/main.js', import.meta.url).pathname;
const bin = new URL('../../bin/tollgate.mjs', import.meta.url).pathname;
export const CLUSTER_ADMIN_TOKEN = 'battery-admin-token-0123456789';
export const INSTANCES = 3;

/**
 * Upstream timeouts short enough that a hung or cut upstream call ends within seconds, and with
 * them the sweeper's stale age (2 × (queue + connect + first byte + idle) = 14 s here).
 */
const UPSTREAM_TIMEOUTS = { connect_ms: 1_000, first_byte_ms: 2_500, idle_ms: 1_500 };
const QUEUE_TIMEOUT_MS = 2_000;
export const STALE_AFTER_MS =
  2 *
  (QUEUE_TIMEOUT_MS +
    UPSTREAM_TIMEOUTS.connect_ms +
    UPSTREAM_TIMEOUTS.first_byte_ms +
    UPSTREAM_TIMEOUTS.idle_ms);
/**
 * The key cache's TTL in the battery: far above the bound the checks hold instances to, so a
 * disabled key refused everywhere within `KEY_NOTICE_BOUND_MS` proves the change notices
 * (PostgreSQL LISTEN/NOTIFY), not the TTL.
 */
export const KEY_CACHE_TTL_MS = 60_000;
/** How long a disabled key may still be served by another instance (docs/operations.md). */
export const KEY_NOTICE_BOUND_MS = 1_000;
/**
 * After a database fault ends, how long an instance may still be without its listening
 * connection: the listener's longest backoff (5 s) plus its connect timeout (5 s). Notices sent
 * meanwhile are lost; listening again forgets every cached key (store/change-feed.ts).
 */
export const LISTENER_RECOVERY_MS = 10_000;

/** The gateway's configuration in the battery: three models, all on the shared simulator process. */
export function clusterConfig(simulatorBase: string): ConfigFile {
  const model = (id: string) => {
    const found = defaultConfig.models.find((candidate) => candidate.id === id);
    if (found === undefined) throw new Error(`the default configuration has ${id}`);
    return { ...found, upstream: 'sim-process' };
  };
  return {
    ...defaultConfig,
    upstreams: {
      'sim-process': {
        kind: 'openai',
        base_url: `${simulatorBase}/v1`,
        timeouts: UPSTREAM_TIMEOUTS,
        queue_timeout_ms: QUEUE_TIMEOUT_MS,
      },
    },
    models: [model('sim-chat'), model('sim-embed'), model('sim-video')],
    limits: {
      requests_per_minute: 1_000_000,
      concurrent_requests: 1_000,
      concurrent_requests_per_account: 1_000,
      concurrency_lease_ms: 3_000,
    },
    server: { max_connections_per_address: 4_096 },
    tasks: { lease_ms: 3_000, vanished_after_ms: 30_000 },
    key_cache_ttl_ms: KEY_CACHE_TTL_MS,
  };
}

export interface Cluster {
  /** nginx: where every client request goes. */
  readonly base: string;
  /** Each instance's own address (admin calls that must reach one, metrics). */
  readonly instanceBases: string[];
  /** The database URL as the checks reach it (directly, not through the cuttable proxy). */
  readonly databaseUrl: string;
  /** The upstream's submissions of video jobs by idempotency key, across every instance. */
  readonly videoSubmissions: Map<string, number>;
  /**
   * kill -9 of instance `index` (even one still starting), then a new process on its port;
   * resolves when that one is healthy, or has itself been killed before it was.
   */
  killAndRestart(index: number): Promise<void>;
  /**
   * SIGTERM to instance `index` (a graceful shutdown: it drains, then exits), then a new process
   * on its port; resolves when that one is healthy. How long the old one took to exit (ms).
   */
  terminateAndRestart(index: number): Promise<number>;
  /** How often an instance exited by itself and was started again (as a supervisor would). */
  readonly supervisorRestarts: { readonly count: number };
  /** pg_terminate_backend of every gateway session on the battery's database; how many. */
  terminateGatewaySessions(): Promise<number>;
  /** PostgreSQL "restarts": the proxy in front of it drops every connection for `ms`. */
  cutDatabase(ms: number): Promise<void>;
  /** Redis stopped for `ms`, then started again (empty). */
  bounceRedis(ms: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Three gateway processes on one PostgreSQL database and one private Redis, nginx in front,
 * `tollgate sim` as the one upstream (behind a counting proxy that outlives every gateway). The
 * gateways reach PostgreSQL through a TCP proxy, so a PostgreSQL restart is simulated without
 * touching the shared server; the battery's own database is created here and dropped by `close`.
 */
export async function startCluster(pgUrl: string): Promise<Cluster> {
  if (!existsSync(main)) throw new Error('build first: npm run build (npm test builds dist/)');
  const directory = mkdtempSync(path.join(tmpdir(), 'tollgate-battery-'));
  // TOLLGATE_BATTERY_KEEP=1 keeps the directory (instance logs, nginx's error log) for a post-mortem.
  const keep = process.env['TOLLGATE_BATTERY_KEEP'] === '1';
  const children = new Set<ChildProcess>();
  const cleanups: (() => Promise<void>)[] = [
    async () => (keep ? undefined : rmSync(directory, { recursive: true, force: true })),
  ];
  let closing = false;
  const close = async () => {
    closing = true;
    for (const child of children) child.kill('SIGKILL');
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  };
  try {
    const scratch = await createScratchDatabase(pgUrl, 'tollgate_battery');
    const database = scratch.name;
    cleanups.push(scratch.drop);
    const direct = new URL(scratch.url);
    const pgProxy: TcpProxy = await startTcpProxy({
      host: direct.hostname,
      port: Number(direct.port || 5432),
    });
    cleanups.push(() => pgProxy.close());
    const throughProxy = new URL(direct);
    throughProxy.hostname = '127.0.0.1';
    throughProxy.port = String(pgProxy.port);

    const redis: PrivateRedis = await startPrivateRedis();
    cleanups.push(() => redis.stop());

    const simulatorPort = await freePort();
    const simulator = spawn(process.execPath, [bin, 'sim', '--port', String(simulatorPort)], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    children.add(simulator);
    await waitFor(`http://127.0.0.1:${simulatorPort}/v1/videos?limit=1`);
    const counter = await countingProxy(simulatorPort);
    cleanups.push(() => counter.close());

    const configFile = path.join(directory, 'config.json');
    writeFileSync(configFile, JSON.stringify(clusterConfig(`http://127.0.0.1:${counter.port}`)));
    // One data directory for all three: local asset storage is shared on one machine (several
    // machines need the S3-compatible store, docs/deploy.md).
    const dataDir = path.join(directory, 'data');
    mkdirSync(dataDir);
    const ports = await Promise.all(Array.from({ length: INSTANCES }, () => freePort()));
    const processes: (ChildProcess | undefined)[] = [];
    const replacing: (Promise<void> | undefined)[] = [];
    const killed = new WeakSet<ChildProcess>();
    const supervisorRestarts = { count: 0 };
    /** Spawns instance `index`; returns the wait for it to be healthy (or killed first). */
    const spawnInstance = (index: number): Promise<void> => {
      const port = ports[index] ?? 0;
      const child = spawn(process.execPath, [main], {
        env: {
          ...process.env,
          PORT: String(port),
          HOST: '127.0.0.1',
          TOLLGATE_DATA_DIR: dataDir,
          TOLLGATE_CONFIG: configFile,
          TOLLGATE_DATABASE_URL: throughProxy.toString(),
          TOLLGATE_ADMIN_TOKEN: CLUSTER_ADMIN_TOKEN,
          TOLLGATE_REDIS_URL: redis.url,
          LOG_LEVEL: 'warn',
        },
        // Each instance's log, appended across its restarts: what to read when a run fails.
        stdio: ['ignore', openSync(path.join(directory, `instance-${index}.log`), 'a'), 'inherit'],
      });
      children.add(child);
      child.once('exit', () => {
        children.delete(child);
        // An instance that exits by itself (it refuses to start while PostgreSQL is unreachable)
        // is started again after a second, as systemd's `Restart=always` would.
        if (!closing && !killed.has(child) && processes[index] === child) {
          supervisorRestarts.count += 1;
          setTimeout(() => {
            if (!closing && processes[index] === child) void replace(index).catch(() => {});
          }, 1_000);
        }
      });
      processes[index] = child;
      return waitFor(`http://127.0.0.1:${port}/healthz`, () => child.exitCode !== null);
    };
    /**
     * kill -9 of instance `index` (if running) and a new process on its port. Kills and spawns of
     * one instance run one after the other (two at once would start two processes on one port);
     * only the wait for health overlaps with what comes next.
     */
    function replace(index: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<number> {
      let exitMs = 0;
      const spawned = (replacing[index] ?? Promise.resolve()).then(async () => {
        const victim = processes[index];
        if (victim !== undefined && victim.exitCode === null && victim.signalCode === null) {
          killed.add(victim);
          const signalled = Date.now();
          const exited = new Promise((resolve) => victim.once('exit', resolve));
          victim.kill(signal);
          await exited;
          exitMs = Date.now() - signalled;
        }
        return spawnInstance(index);
      });
      replacing[index] = spawned.then(() => undefined);
      return spawned.then(() => exitMs);
    }
    // One after the other at first: migrations are locked, but a cold start is quicker this way.
    for (let index = 0; index < INSTANCES; index += 1) await spawnInstance(index);
    const nginx: RunningNginx = await startNginx(path.join(directory, 'nginx'), ports);
    cleanups.push(() => nginx.stop());

    return {
      base: nginx.base,
      instanceBases: ports.map((port) => `http://127.0.0.1:${port}`),
      databaseUrl: direct.toString(),
      videoSubmissions: counter.submissions,
      killAndRestart: async (index) => void (await replace(index)),
      terminateAndRestart: (index) => replace(index, 'SIGTERM'),
      supervisorRestarts,
      terminateGatewaySessions: () =>
        queryPostgres(
          pgUrl,
          `select pg_terminate_backend(pid) from pg_stat_activity
            where application_name = 'tollgate' and datname = $1 and pid <> pg_backend_pid()`,
          [database],
        ).then((killed) => killed.length),
      async cutDatabase(ms) {
        await pgProxy.cut();
        await sleep(ms);
        await pgProxy.restore();
      },
      async bounceRedis(ms) {
        await redis.stop();
        await sleep(ms);
        await redis.start();
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Until `url` answers 2xx, or `gone()` (its process was killed meanwhile); at most 60 s (a restart
 * on a busy shared machine can take a while).
 */
async function waitFor(url: string, gone: () => boolean = () => false): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    if (gone()) return;
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer`);
}
