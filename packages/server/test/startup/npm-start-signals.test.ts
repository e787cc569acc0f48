import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, waitForHealth } from '../helpers/processes.js';

const repo = fileURLToPath(new URL('../../../../', import.meta.url));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function within(ms: number, condition: () => Promise<boolean> | boolean): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return condition();
}

/**
 * `npm start &` then `kill $!` (or a process manager stopping npm) must stop the gateway, not
 * just npm: a gateway left behind, re-parented to init, keeps the port, the SQLite file and its
 * task leases, and the next start fails with the port in use. The start script `exec`s node, so
 * npm's child is the gateway itself and npm's signal forwarding reaches it.
 */
describe('a signal to the npm process stops the gateway', () => {
  let npm: ChildProcess | undefined;
  let gatewayPid: number | undefined;
  let dir: string | undefined;
  afterEach(() => {
    // Whatever happened, nothing this test started survives it.
    if (npm?.pid !== undefined && isAlive(npm.pid)) process.kill(-npm.pid, 'SIGKILL');
    if (gatewayPid !== undefined && isAlive(gatewayPid)) process.kill(gatewayPid, 'SIGKILL');
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    npm = gatewayPid = dir = undefined;
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s to npm: the gateway shuts down gracefully and the port is free within 5 s',
    async (signal) => {
      dir = mkdtempSync(path.join(tmpdir(), 'tollgate-signals-'));
      const port = await freePort();
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !/^(TOLLGATE_|LOG_|npm_)/i.test(name)),
      );
      // `prestart` builds; `npm test` has just built (pretest), and a build from inside the
      // suite would race the other test files on dist/. The start script itself runs as is.
      npm = spawn('npm', ['start', '--silent'], {
        cwd: repo,
        env: {
          ...env,
          PORT: String(port),
          TOLLGATE_DATA_DIR: dir,
          LOG_FORMAT: 'json',
          npm_config_ignore_scripts: 'true',
        },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      npm.stdout?.on('data', (chunk: Buffer) => void (output += chunk.toString()));
      npm.stderr?.on('data', (chunk: Buffer) => void (output += chunk.toString()));
      const npmExited = new Promise<void>((resolve) => npm?.once('exit', () => resolve()));

      await waitForHealth(`http://127.0.0.1:${port}`);
      // The line may follow the first answer by a moment.
      await within(5_000, () => output.includes('"msg":"tollgate listening"'));
      const listening = output
        .split('\n')
        .map((line) => (line.startsWith('{') ? (JSON.parse(line) as Record<string, unknown>) : {}))
        .find((line) => line['msg'] === 'tollgate listening');
      gatewayPid = Number(listening?.['pid']);
      expect(gatewayPid, output).toBeGreaterThan(0);
      expect(gatewayPid).not.toBe(npm.pid);

      process.kill(npm.pid ?? 0, signal);

      expect(await within(5_000, () => portIsFree(port)), `port ${port} still taken`).toBe(true);
      expect(await within(5_000, () => !isAlive(gatewayPid ?? 0)), 'gateway still running').toBe(
        true,
      );
      await npmExited;
      expect(output).toContain(`"signal":"${signal}","msg":"shutting down"`);
    },
  );
});
