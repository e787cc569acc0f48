import { afterEach, expect, it } from 'vitest';
import { TaskWorker } from '../../src/tasks/task-worker.js';
import type { Clock } from '../../src/util/effects.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { testConfig, type TestGateway } from '../helpers/gateway.js';
import { startTaskGateway, workUntil, type TaskBody } from '../helpers/tasks.js';

const HOUR_MS = 3_600_000;
/**
 * The upstream takes this long to accept a submission (`[sim:delay]`, real time): the claim is
 * live meanwhile, and the test reads the row and ticks another worker well within it.
 */
const SLOW_SUBMIT_MS = 1_000;
/** A lease shorter than the 60 s default, set in the configuration file. */
const CONFIGURED_LEASE_MS = 5_000;

/**
 * Issue 18, Found 4 / Deliver 1, and Found 11 ("the lease is not configurable"). A claim's
 * expiry is judged by the database's clock, never an instance's: an instance whose clock runs
 * ahead (an injected clock an hour fast) would otherwise think every live lease had run out and
 * take tasks another worker is submitting — a second submission of paid work. And the lease's
 * length is the configuration's `tasks.lease_ms`.
 */
describeEachDialect('claims judged by the database on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  /** Another instance's worker on the same database, with its own (skewed) clock. */
  function workerWithClock(client: TestGateway, clock: Clock): TaskWorker {
    const services = client.services;
    return new TaskWorker(
      {
        db: services.store.db,
        tasks: services.taskStore,
        providers: services.providers,
        families: services.taskFamilies,
        prices: services.prices,
        storage: services.assets,
        effects: { clock, ids: services.ids },
        logger: services.logger,
        metrics: services.metrics,
        maxVideoBytes: services.config.limits.asset_bytes,
        channels: services.channels,
      },
      { owner: 'fast-clock-instance' },
    );
  }

  async function slowVideo(client: TestGateway, key: string): Promise<TaskBody> {
    const created = await client.call('POST', '/v1/videos', {
      key,
      body: {
        model: 'sim-video',
        prompt: `a slow lighthouse [sim:delay=${SLOW_SUBMIT_MS}]`,
        seconds: 1,
        size: '320x240',
      },
    });
    expect(created.statusCode, created.body).toBe(202);
    return created.json<TaskBody>();
  }

  it('an instance whose clock runs an hour ahead takes no task under a live claim', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { key } = await client.account(100_000_000);
    const task = await slowVideo(client, key);
    const first = client.services.taskWorker.tick();
    while ((await client.services.taskStore.byId(task.id))?.submission !== 'sending')
      await new Promise((resolve) => setTimeout(resolve, 20));
    const fast = workerWithClock(client, { now: () => client.services.clock.now() + HOUR_MS });
    expect(await fast.tick()).toBe(0);
    expect(await first).toBe(1);
    const row = await client.services.taskStore.byId(task.id);
    expect(row).toMatchObject({ status: 'running', submission: 'accepted' });
    expect(row?.upstream_task_id).toMatch(/^video_/);
    // Nothing was marked submission_unknown, no transition but the first worker's own.
    const transitions = await client.services.metrics.taskTransitions.get();
    expect(transitions.values).not.toContainEqual(
      expect.objectContaining({ labels: { to: 'submission_unknown' } }),
    );
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(task.id))?.status === 'succeeded',
      20_000,
    );
  });

  it("a claim lasts the configuration's tasks.lease_ms", async () => {
    gateway = await startTaskGateway(dialect, {
      config: testConfig({ tasks: { lease_ms: CONFIGURED_LEASE_MS } }),
    });
    const client = gateway;
    const { key } = await client.account(100_000_000);
    const task = await slowVideo(client, key);
    const first = client.services.taskWorker.tick();
    let row = await client.services.taskStore.byId(task.id);
    while (row?.submission !== 'sending') {
      await new Promise((resolve) => setTimeout(resolve, 20));
      row = await client.services.taskStore.byId(task.id);
    }
    // The lease ends within the configured length of now (the database shares this machine's
    // clock), not the 60 s default.
    const left = (row.lease_until ?? 0) - Date.now();
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(CONFIGURED_LEASE_MS + 500);
    expect(await first).toBe(1);
  });
});
