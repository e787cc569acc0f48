import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { OpenAiImages } from '../../src/providers/openai-compatible/images.js';
import { createServices, type Services } from '../../src/services.js';
import { describeOnPostgres, type TestDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import type { TaskBody } from '../helpers/tasks.js';

const TASKS = 200;

/** The same PostgreSQL schema for two instances. */
function shared(dialect: TestDialect): TestDialect {
  const fresh = dialect.fresh();
  return { name: dialect.name, fresh: () => fresh };
}

/**
 * Several instances share PostgreSQL (the embedded SQLite file is one instance's: see
 * docs/tasks.md), so the race runs there; without TOLLGATE_TEST_PG_URL it is registered skipped,
 * loudly, by helpers/dialects.ts, and CI requires PostgreSQL.
 */
describeOnPostgres('two workers on one $name database', (dialect) => {
  let gateway: TestGateway | undefined;
  let second: Services | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await second?.close();
    await gateway?.expectLedgerClean();
    await gateway?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it(`race for ${TASKS} tasks: each is submitted exactly once and finishes once`, async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tollgate-two-workers-'));
    const database = shared(dialect);
    gateway = await startGateway(database, { services: { workerName: 'instance-a' } });
    const client = gateway;
    second = await createServices({
      config: parseConfig(testConfig(), 'test'),
      ...database.fresh(),
      assetsDir: path.join(dir, 'assets-b'),
      workerName: 'instance-b',
    });
    const { key } = await client.account(1_000_000_000);
    // The spy calls the real method; its calls list each submission's idempotency key (task id).
    const submissions = vi.spyOn(OpenAiImages.prototype, 'submit');
    const ids: string[] = [];
    for (let index = 0; index < TASKS; index += 1) {
      const created = await client.call('POST', '/v1/images/generations', {
        key,
        body: { model: 'sim-image', prompt: `tile ${index}`, size: '256x256' },
      });
      expect(created.statusCode).toBe(202);
      ids.push(created.json<TaskBody>().id);
    }
    const workers = [client.services.taskWorker, second.taskWorker];
    const deadline = Date.now() + 120_000;
    for (;;) {
      const open = await client.services.store.db
        .selectFrom('tasks')
        .select((eb) => eb.fn.countAll<string>().as('count'))
        .where('status', 'in', ['queued', 'running'])
        .executeTakeFirstOrThrow();
      if (Number(open.count) === 0) break;
      if (Date.now() > deadline) throw new Error('tasks did not finish');
      await Promise.all(workers.map((worker) => worker.tick()));
    }
    const submitted = submissions.mock.calls.map((call) => call[1]);
    expect(submitted).toHaveLength(TASKS);
    expect(new Set(submitted).size).toBe(TASKS);
    const finished = await client.services.store.db
      .selectFrom('tasks')
      .select(['status', 'lease_owner'])
      .execute();
    expect(finished.every((task) => task.status === 'succeeded')).toBe(true);
    const outputs = await client.services.store.db
      .selectFrom('assets')
      .select('task_id')
      .where('task_id', 'is not', null)
      .execute();
    expect(outputs).toHaveLength(TASKS);
  }, 180_000);
});
