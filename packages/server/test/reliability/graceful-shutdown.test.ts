import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { describeOnPostgres } from '../helpers/dialects.js';
import { createScratchDatabase } from '../helpers/postgres-statement.js';
import { freePort, waitForHealth } from '../helpers/processes.js';
import { tollgate } from '../operations/gateway-process.js';

const main = new URL('../../dist/main.js', import.meta.url).pathname;
const pgUrl = process.env['TOLLGATE_TEST_PG_URL'];
const ADMIN_TOKEN = 'shutdown-admin-token-0123456789';
const DRAIN_DELAY_MS = 1_500;
/** The simulator's answer to the chat and to the image submission comes after this. */
const UPSTREAM_DELAY_MS = 4_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a new TCP connection to the gateway is refused (fetch fails before any answer). */
async function refused(base: string): Promise<boolean> {
  try {
    await fetch(`${base}/healthz`, { headers: { connection: 'close' } });
    return false;
  } catch {
    return true;
  }
}

/**
 * The risk: a rolling restart loses or double-charges what is in flight. SIGTERM must turn
 * `/readyz` to 503 while the port still accepts (the drain delay), then refuse new connections,
 * let a slow streamed chat in flight finish (billed once), let the task step in flight finish and
 * give its lease back (another instance may take the task at once instead of waiting out the
 * lease), and exit 0 — a real process, as an orchestrator stops it.
 */
describeOnPostgres('graceful shutdown of a gateway process', () => {
  let gateway: ChildProcess | undefined;
  let dir: string | undefined;
  let database: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;
  afterEach(async () => {
    gateway?.kill('SIGKILL');
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    await database?.drop();
    gateway = dir = database = undefined;
  });

  it('SIGTERM: readyz 503, then new connections refused, the stream in flight completes billed once, the task lease handed back, exit 0', async () => {
    if (!existsSync(main)) throw new Error('build first: npm test builds dist/');
    database = await createScratchDatabase(pgUrl ?? '', 'tollgate_shutdown');
    const url = database.url;
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-shutdown-'));
    writeFileSync(
      path.join(dir, 'config.json'),
      JSON.stringify({
        ...defaultConfig,
        server: { shutdown_drain_delay_ms: DRAIN_DELAY_MS, shutdown_grace_ms: 20_000 },
      }),
    );
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    gateway = spawn(process.execPath, [main], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        TOLLGATE_DATA_DIR: dir,
        TOLLGATE_CONFIG: path.join(dir, 'config.json'),
        TOLLGATE_DATABASE_URL: url,
        TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
        TOLLGATE_REDIS_URL: '',
        LOG_LEVEL: 'error',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) =>
      gateway?.once('exit', (code) => resolve(code)),
    );
    await waitForHealth(base);
    const adminCall = async (route: string, body: unknown) =>
      (await (
        await fetch(`${base}/admin/v1${route}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json()) as Record<string, unknown>;
    const accountId = String((await adminCall('/accounts', { email: 'drain@example.test' }))['id']);
    await adminCall(`/accounts/${accountId}/topups`, { amount: 100_000_000, reference: 'drain' });
    const key = String((await adminCall(`/accounts/${accountId}/keys`, {}))['key']);
    const caller = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

    const task = await fetch(`${base}/v1/images/generations`, {
      method: 'POST',
      headers: { ...caller, 'idempotency-key': randomUUID() },
      body: JSON.stringify({
        model: 'sim-image',
        prompt: `a slow tile [sim:delay=${UPSTREAM_DELAY_MS}]`,
        size: '256x256',
      }),
    });
    expect(task.status).toBe(202);
    const taskId = String(((await task.json()) as Record<string, unknown>)['id']);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const leaseOwner = async () =>
        (
          await db.query<{ lease_owner: string | null }>(
            'select lease_owner from tasks where id = $1',
            [taskId],
          )
        ).rows[0]?.lease_owner ?? null;
      for (let waited = 0; (await leaseOwner()) === null; waited += 50) {
        if (waited > 5_000) throw new Error('the worker never leased the task');
        await sleep(50);
      }

      const chatKey = randomUUID();
      const chat = fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...caller, 'idempotency-key': chatKey },
        body: JSON.stringify({
          model: 'sim-chat',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: `hello there [sim:delay=${UPSTREAM_DELAY_MS}]` }],
        }),
      }).then(async (response) => ({ status: response.status, text: await response.text() }));
      await sleep(300);

      gateway.kill('SIGTERM');
      await sleep(200);
      // Drain delay: the port still accepts, and says it is not ready.
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'draining' });
      await sleep(DRAIN_DELAY_MS);
      // Past it: new connections are refused while the stream is still in flight.
      expect(gateway.exitCode).toBeNull();
      expect(await refused(base)).toBe(true);

      const streamed = await chat;
      expect(streamed.status).toBe(200);
      expect(streamed.text).toContain('data: [DONE]');
      expect(await exited).toBe(0);

      const record = await db.query<{ id: string; status: string; amount: string | null }>(
        'select id, status, amount from requests where idempotency_key = $1',
        [chatKey],
      );
      expect(record.rows).toHaveLength(1);
      const [row] = record.rows;
      expect(row?.status).toBe('succeeded');
      const captures = await db.query<{ amount: string }>(
        "select -balance_delta as amount from journal where request_id = $1 and kind = 'capture'",
        [row?.id],
      );
      expect(captures.rows).toHaveLength(1);
      expect(Number(captures.rows[0]?.amount)).toBe(Number(row?.amount));
      expect(Number(row?.amount)).toBeGreaterThan(0);

      const leased = await db.query<{ lease_owner: string | null; lease_until: string | null }>(
        'select lease_owner, lease_until from tasks where id = $1',
        [taskId],
      );
      expect(leased.rows[0]).toEqual({ lease_owner: null, lease_until: null });
    } finally {
      await db.end();
    }
    const check = await tollgate({ TOLLGATE_DATABASE_URL: url }, 'ledger', 'check');
    expect(check.code, check.stdout + check.stderr).toBe(0);
  }, 60_000);
});
