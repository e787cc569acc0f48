import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { oneMicroYuanEmbeddingsConfig } from '../helpers/gateway.js';
import { freePort, waitForHealth } from '../helpers/processes.js';

/**
 * A real gateway process (dist/main.js) and the `tollgate` command (bin/tollgate.mjs), as an
 * operator runs them: the day-two procedures (docs/operations.md) are tested on processes, not
 * on an app in the test's own process, because a backup must work from another process while
 * the gateway serves.
 */
const main = new URL('../../dist/main.js', import.meta.url).pathname;
const bin = new URL('../../bin/tollgate.mjs', import.meta.url).pathname;
const run = promisify(execFile);
const ADMIN_TOKEN = 'operations-admin-token-0123456789';

export function requireBuild(): void {
  if (!existsSync(main) || !existsSync(new URL('../../dist/cli/main.js', import.meta.url)))
    throw new Error('build first: npm run build (npm test builds dist/ before running)');
}

/** Writes the configuration every process here uses: `sim-embed` at 1 micro-yuan a request. */
export function writeConfig(dir: string): string {
  const file = path.join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(oneMicroYuanEmbeddingsConfig()));
  return file;
}

export interface GatewayProcess {
  readonly base: string;
  readonly child: ChildProcess;
  /** `SIGTERM`, then waits for the exit (the graceful drain). */
  stop(): Promise<void>;
  admin(method: string, route: string, body?: unknown): Promise<Record<string, unknown>>;
  /** A funded account with a personal key. */
  account(amount: number): Promise<{ accountId: string; key: string }>;
  embed(key: string, input: string): Promise<number>;
}

/** Starts `node dist/main.js` with `env` (data dir, database URL…) on a free port. */
export async function startGatewayProcess(env: NodeJS.ProcessEnv): Promise<GatewayProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [main], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
      TOLLGATE_REDIS_URL: '',
      LOG_LEVEL: 'error',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  await waitForHealth(base);
  const admin = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${base}/admin/v1${route}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as Record<string, unknown>;
    if (!response.ok)
      throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  return {
    base,
    child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
    admin,
    account: async (amount) => {
      const accountId = String(
        (await admin('POST', '/accounts', { email: 'ops@example.test' }))['id'],
      );
      await admin('POST', `/accounts/${accountId}/topups`, { amount, reference: 'operations' });
      const key = String(
        (await admin('POST', `/accounts/${accountId}/keys`, { kind: 'personal' }))['key'],
      );
      return { accountId, key };
    },
    embed: async (key, input) => {
      const response = await fetch(`${base}/v1/embeddings`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'idempotency-key': randomUUID(),
        },
        body: JSON.stringify({ model: 'sim-embed', input }),
      });
      await response.arrayBuffer();
      return response.status;
    },
  };
}

/**
 * Sends paid requests, 20 at a time, until `procedure` has finished and at least `minimum` were
 * sent; resolves with every status and the procedure's result. The procedure starts once the
 * first batches have gone through, so it runs while requests keep arriving.
 */
export async function underLoad<T>(
  gateway: GatewayProcess,
  key: string,
  procedure: () => Promise<T>,
  minimum = 200,
): Promise<{ statuses: number[]; result: T }> {
  const statuses: number[] = [];
  let running: Promise<T> | undefined;
  let done = false;
  while (!done || statuses.length < minimum) {
    const batch = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        gateway.embed(key, `request ${statuses.length + index}`),
      ),
    );
    statuses.push(...batch);
    if (running === undefined && statuses.length >= 60) {
      running = procedure();
      void running.then(
        () => (done = true),
        () => (done = true),
      );
    }
  }
  return { statuses, result: await (running as Promise<T>) };
}

/**
 * Starts `node dist/main.js` with `env` and waits for it to exit on its own, as a gateway that
 * refuses to start does: its exit code and the lines it printed to stderr. One that starts
 * instead is killed after 30 s (exit code `null`), so the test fails rather than leaving it.
 */
export async function startExpectingRefusal(
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn(process.execPath, [main], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const startedInstead = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(startedInstead);
  return { code, lines: stderr.trim().split('\n') };
}

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `tollgate ARGS…` as its own process with `env` added to this one's. */
export async function tollgate(env: NodeJS.ProcessEnv, ...args: string[]): Promise<CliRun> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      env: { ...process.env, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
