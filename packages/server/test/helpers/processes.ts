import net from 'node:net';
import { runCli } from '../../src/cli/main.js';

/**
 * A free loopback port for a process a test starts, chosen below Linux's ephemeral range
 * (32768 and up by default): a port the kernel hands out for `listen(0)` elsewhere in the run
 * (every in-process gateway and simulator) can then never take it between this check and the
 * process's own listen, which is how a port from `listen(0)` raced with them.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await isFree(port)) return port;
  }
  throw new Error('no free port between 20000 and 32000 after 50 tries');
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Waits until a gateway process answers `/healthz` (at most 15 s). */
export async function waitForHealth(base: string): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt += 1) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${base} did not start`);
}

export interface CliResult {
  readonly code: number;
  readonly json: Record<string, unknown>;
}

/** Runs one CLI command in this process with `env`; its exit code and both outputs as written. */
export async function cliWithEnv(env: NodeJS.ProcessEnv, ...args: string[]): Promise<RawCliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(
    args,
    env,
    { write: (text) => void (stdout += text) },
    { write: (text) => void (stderr += text) },
  );
  return { code, stdout, stderr };
}

/** Runs one CLI command on the data dir `dataDir`; its exit code and both outputs as written. */
export function cliRawIn(dataDir: string, ...args: string[]): Promise<RawCliResult> {
  return cliWithEnv({ TOLLGATE_DATA_DIR: dataDir }, ...args);
}

/** Runs one CLI command on the data dir `dataDir`; its JSON answer (stdout, else stderr). */
export async function cliIn(dataDir: string, ...args: string[]): Promise<CliResult> {
  const { code, stdout, stderr } = await cliRawIn(dataDir, ...args);
  return { code, json: JSON.parse(stdout === '' ? stderr : stdout) as Record<string, unknown> };
}

export interface RawCliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}
