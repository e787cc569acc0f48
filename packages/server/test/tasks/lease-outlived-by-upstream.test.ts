import { afterEach, expect, it, vi } from 'vitest';
import { OpenAiVideos } from '../../src/providers/openai-compatible/videos.js';
import { TaskWorker, type WorkerOptions } from '../../src/tasks/task-worker.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';
import { settleBodyOf, startTaskGateway, workUntil, type TaskBody } from '../helpers/tasks.js';

const BALANCE = 100_000_000;
/** A lease far shorter than the upstream's answer below. */
const LEASE_MS = 300;
/** The upstream takes this long to accept a submission (`[sim:delay]`). */
const SLOW_SUBMIT_MS = 1_500;

/**
 * Issue 18, Found 4 / Deliver 1: a live worker whose upstream call outlasts its lease. With its
 * renewals reaching the database it keeps the task; stalled (renewals lost), it hands the task
 * over — and the upstream's late answer is kept (its upstream id stored through the guarded
 * `submission_unknown` → `running`), never thrown away. Either way: one submission, one charge.
 */
describeEachDialect('a worker whose upstream call outlasts its lease on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  /** A second instance's worker on the same database (its own name, its own claims). */
  function secondWorker(client: TestGateway): TaskWorker {
    const services = client.services;
    return new TaskWorker(
      {
        db: services.store.db,
        tasks: services.taskStore,
        providers: services.providers,
        families: services.taskFamilies,
        prices: services.prices,
        storage: services.assets,
        effects: { clock: services.clock, ids: services.ids },
        logger: services.logger,
        metrics: services.metrics,
        maxVideoBytes: services.config.limits.asset_bytes,
        channels: services.channels,
      },
      { owner: 'second-instance', leaseMs: LEASE_MS },
    );
  }

  async function slowVideo(client: TestGateway, key: string): Promise<TaskBody> {
    const created = await client.call('POST', '/v1/videos', {
      key,
      body: {
        model: 'sim-video',
        prompt: `a slow harbour [sim:delay=${SLOW_SUBMIT_MS}]`,
        seconds: 1,
        size: '320x240',
      },
    });
    expect(created.statusCode, created.body).toBe(202);
    return created.json<TaskBody>();
  }

  async function finishAndSettle(client: TestGateway, key: string, accountId: string, id: string) {
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(id))?.status === 'succeeded',
      20_000,
    );
    const task = (await client.call('GET', `/v1/videos/${id}`, { key })).json<TaskBody>();
    const settled = await client.call('POST', `/v1/videos/${id}/settle`, {
      key,
      body: settleBodyOf(task),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    const charged = task.billing.actual_amount ?? 0;
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE - charged,
      held: 0,
      available: BALANCE - charged,
    });
  }

  async function start(worker: Omit<WorkerOptions, 'owner'>) {
    gateway = await startTaskGateway(dialect, {
      services: { worker: { leaseMs: LEASE_MS, ...worker } },
    });
    const client = gateway;
    const account = await client.account(BALANCE);
    const submissions = vi.spyOn(OpenAiVideos.prototype, 'submit');
    return { client, ...account, submissions };
  }

  it('a live worker renews its claim while the upstream is slow: no other instance takes the task', async () => {
    const { client, key, accountId, submissions } = await start({});
    const task = await slowVideo(client, key);
    const first = client.services.taskWorker.tick();
    const other = secondWorker(client);
    // Several leases pass while the first worker waits for the upstream.
    const until = Date.now() + SLOW_SUBMIT_MS - 200;
    let takenByOther = 0;
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS));
      takenByOther += await other.tick();
    }
    expect(await first).toBe(1);
    expect(takenByOther).toBe(0);
    const row = await client.services.taskStore.byId(task.id);
    expect(row).toMatchObject({ status: 'running', submission: 'accepted' });
    expect(row?.upstream_task_id).toMatch(/^video_/);
    await finishAndSettle(client, key, accountId, task.id);
    expect(submissions).toHaveBeenCalledTimes(1);
  });

  it('a stalled worker loses its claim, and the late answer keeps its upstream id: one submission, one charge', async () => {
    const { client, key, accountId, submissions } = await start({
      // Stalled: its renewals never reach the database.
      renewalFault: () => {
        throw new Error('stalled');
      },
    });
    const task = await slowVideo(client, key);
    const first = client.services.taskWorker.tick();
    // Wait (without ticking) until the first worker has sent it.
    while ((await client.services.taskStore.byId(task.id))?.submission !== 'sending')
      await new Promise((resolve) => setTimeout(resolve, 20));
    // The lease runs out (by the database's clock) while the upstream is still answering; the
    // other instance finds the task mid-submission and marks it submission_unknown.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 2));
    expect(await secondWorker(client).tick()).toBe(1);
    expect((await client.services.taskStore.byId(task.id))?.status).toBe('submission_unknown');
    // The first worker's answer arrives after its claim was lost: it is kept.
    await first;
    const row = await client.services.taskStore.byId(task.id);
    expect(row).toMatchObject({ status: 'running', submission: 'accepted' });
    expect(row?.upstream_task_id).toMatch(/^video_/);
    const kept = await client.services.metrics.taskLateAnswers.get();
    expect(kept.values).toContainEqual(
      expect.objectContaining({ labels: { outcome: 'kept' }, value: 1 }),
    );
    await finishAndSettle(client, key, accountId, task.id);
    expect(submissions).toHaveBeenCalledTimes(1);
  });

  it('a late answer arriving after another instance claimed the task, before it marked it, keeps its upstream id', async () => {
    const { client, key, accountId, submissions } = await start({
      renewalFault: () => {
        throw new Error('stalled');
      },
    });
    const store = client.services.taskStore;
    const task = await slowVideo(client, key);
    const first = client.services.taskWorker.tick();
    while ((await store.byId(task.id))?.submission !== 'sending')
      await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 2));
    // Another instance claims the task, and its step has not written yet (still queued, sending).
    const [claimed] = await store.claimDue({
      owner: 'second-instance',
      now: client.services.clock.now(),
      leaseMs: 60_000,
      limit: 1,
      running: new Map(),
      perAccount: 1,
      newToken: () => 'claim_second_instance',
    });
    expect(claimed).toMatchObject({ id: task.id, status: 'queued', submission: 'sending' });
    // The first worker's answer arrives now: its upstream id is kept, the task runs on.
    await first;
    const row = await store.byId(task.id);
    expect(row).toMatchObject({ status: 'running', submission: 'accepted', claim_token: null });
    expect(row?.upstream_task_id).toMatch(/^video_/);
    const kept = await client.services.metrics.taskLateAnswers.get();
    expect(kept.values).toContainEqual(
      expect.objectContaining({ labels: { outcome: 'kept' }, value: 1 }),
    );
    // The other instance's step then writes nothing: its fenced move finds the task changed.
    expect(
      await store.move(client.services.store.db, {
        id: task.id,
        now: client.services.clock.now(),
        claim: 'claim_second_instance',
        status: { from: 'queued', to: 'submission_unknown' },
      }),
    ).toBe(false);
    await finishAndSettle(client, key, accountId, task.id);
    expect(submissions).toHaveBeenCalledTimes(1);
  });
});
