import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { describeOnPostgres } from '../helpers/dialects.js';
import { createScratchDatabase, withPostgres } from '../helpers/postgres-statement.js';
import { freePort, waitForHealth } from '../helpers/processes.js';

const main = new URL('../../dist/main.js', import.meta.url).pathname;
const pgUrl = process.env['TOLLGATE_TEST_PG_URL'];
const ADMIN_TOKEN = 'race-admin-token-0123456789';
const TASKS = 200;

async function submissionsOf(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^tollgate_task_submissions_total (\d+)/m.exec(text)?.[1] ?? 'NaN');
}

/**
 * Several gateway processes share PostgreSQL; each runs a task worker. Two real processes race
 * for the same 200 image tasks (synchronous upstream: whichever process leases a task submits
 * it to its own built-in simulator): every task must be submitted exactly once across both, as
 * their `tollgate_task_submissions_total` add up to, and finish once.
 */
// Without TOLLGATE_TEST_PG_URL: registered skipped, loudly (helpers/dialects.ts); CI requires it.
describeOnPostgres('two gateway processes on one PostgreSQL', () => {
  const gateways: ChildProcess[] = [];
  let dir: string | undefined;
  let database: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) gateway.kill('SIGKILL');
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    await database?.drop();
    database = undefined;
  });

  it(`race for ${TASKS} tasks: each submitted once across both processes`, async () => {
    if (!existsSync(main)) throw new Error('build first: npm test builds dist/');
    database = await createScratchDatabase(pgUrl ?? '', 'tollgate_race');
    const url = database.url;
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-race-'));
    writeFileSync(
      path.join(dir, 'config.json'),
      JSON.stringify({
        ...defaultConfig,
        limits: { requests_per_minute: 100_000, concurrent_requests: 1_000 },
      }),
    );
    const bases: string[] = [];
    // One after the other: the second finds the schema migrated.
    for (const name of ['a', 'b']) {
      const port = await freePort();
      gateways.push(
        spawn(process.execPath, [main], {
          env: {
            ...process.env,
            PORT: String(port),
            HOST: '127.0.0.1',
            TOLLGATE_DATA_DIR: path.join(dir, name),
            TOLLGATE_CONFIG: path.join(dir, 'config.json'),
            TOLLGATE_DATABASE_URL: url,
            TOLLGATE_ADMIN_TOKEN: ADMIN_TOKEN,
            TOLLGATE_REDIS_URL: '',
            LOG_LEVEL: 'error',
          },
          stdio: ['ignore', 'ignore', 'inherit'],
        }),
      );
      bases.push(`http://127.0.0.1:${port}`);
      await waitForHealth(`http://127.0.0.1:${port}`);
    }
    const [first = '', second = ''] = bases;
    const call = async (base: string, route: string, init: RequestInit = {}) => {
      const response = await fetch(`${base}${route}`, init);
      return {
        status: response.status,
        json: (await response.json()) as Record<string, unknown>,
      };
    };
    const adminHeaders = {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      'content-type': 'application/json',
    };
    const account = await call(first, '/admin/v1/accounts', {
      method: 'POST',
      headers: adminHeaders,
      body: JSON.stringify({ email: 'race@example.test' }),
    });
    const accountId = String(account.json['id']);
    await call(first, `/admin/v1/accounts/${accountId}/topups`, {
      method: 'POST',
      headers: adminHeaders,
      body: JSON.stringify({ amount: 1_000_000_000, reference: 'race' }),
    });
    const key = String(
      (
        await call(first, `/admin/v1/accounts/${accountId}/keys`, {
          method: 'POST',
          headers: adminHeaders,
          body: JSON.stringify({ kind: 'personal' }),
        })
      ).json['key'],
    );
    const ids: string[] = [];
    for (let index = 0; index < TASKS; index += 10) {
      const batch = await Promise.all(
        Array.from({ length: 10 }, (_, offset) =>
          call(index % 20 === 0 ? first : second, '/v1/images/generations', {
            method: 'POST',
            headers: {
              authorization: `Bearer ${key}`,
              'content-type': 'application/json',
              'idempotency-key': randomUUID(),
            },
            body: JSON.stringify({
              model: 'sim-image',
              prompt: `tile ${index + offset}`,
              size: '256x256',
            }),
          }),
        ),
      );
      for (const created of batch) {
        expect(created.status).toBe(202);
        ids.push(String(created.json['id']));
      }
    }
    await withPostgres(url, async (client) => {
      const deadline = Date.now() + 90_000;
      for (;;) {
        const open = await client.query<{ count: string }>(
          "select count(*) as count from tasks where status in ('queued', 'running')",
        );
        if (Number(open.rows[0]?.count) === 0) break;
        if (Date.now() > deadline) throw new Error('tasks did not finish');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const finished = await client.query<{ status: string; count: string }>(
        'select status, count(*) as count from tasks group by status',
      );
      expect(finished.rows).toEqual([{ status: 'succeeded', count: String(TASKS) }]);
    });
    const submissions = (await submissionsOf(first)) + (await submissionsOf(second));
    expect(submissions).toBe(TASKS);
    const ledger = await call(first, '/admin/v1/ledger/check', { headers: adminHeaders });
    expect(ledger.json['violations']).toEqual([]);
  }, 150_000);
});
