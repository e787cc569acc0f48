import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { seededRandom } from '../../src/routing/channel-selection.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { skippingClock } from '../helpers/clock.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { refusedUrl, startFaultFront, type FaultFront } from '../helpers/fault-front.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { finishedTask, settleBodyOf, workUntil, type TaskBody } from '../helpers/tasks.js';

const timeouts = { connect_ms: 2_000, first_byte_ms: 10_000, idle_ms: 10_000 };
/** The hanging channel's: its silence becomes an unconfirmed submission quickly. */
const shortTimeouts = { connect_ms: 2_000, first_byte_ms: 400, idle_ms: 400 };

const base = defaultConfig.models.find((model) => model.id === 'sim-video');
if (base === undefined) throw new Error('no sim-video');
const { upstream: _single, ...video } = base;

/** Submissions (not polls or downloads) a front received. */
const submissions = (front: FaultFront) =>
  front.requests.filter((request) => request === 'POST /videos').length;

/**
 * The risk: a video task submitted twice (on two channels), or never moved off a channel that
 * certainly refused it. Tasks choose their channel like requests, fail over only on a failure the
 * upstream certainly did not process, and stay on the channel that took them for polling and
 * download. One hold, one charge.
 */
describeEachDialect('task submissions fail over only when certain ($name)', (dialect) => {
  let simulator: Simulator;
  let healthy: FaultFront;
  let hanging: FaultFront;
  let gateway: TestGateway;

  beforeAll(async () => {
    // The gateway and the simulator share one clock: `workUntil` skips poll back-offs and the
    // simulated jobs' progress instead of waiting for them (helpers/clock.ts).
    const clock = skippingClock();
    simulator = await startSimulator({ now: () => clock.now() });
    healthy = await startFaultFront(simulator.url);
    hanging = await startFaultFront(simulator.url);
    hanging.mode = 'hang';
    const config: ConfigFile = testConfig({
      upstreams: {
        refusing: { kind: 'openai', base_url: await refusedUrl(), timeouts },
        hanging: { kind: 'openai', base_url: hanging.url, timeouts: shortTimeouts },
        healthy: { kind: 'openai', base_url: healthy.url, timeouts },
      },
      models: [
        {
          ...video,
          channels: [
            { id: 'video-refused', upstream: 'refusing', model: 'sim-video', priority: 10 },
            { id: 'video-healthy', upstream: 'healthy', model: 'sim-video', priority: 0 },
          ],
        },
        {
          ...video,
          id: 'sim-video-hanging',
          channels: [
            { id: 'video-hanging', upstream: 'hanging', model: 'sim-video', priority: 10 },
            { id: 'video-spare', upstream: 'healthy', model: 'sim-video', priority: 0 },
          ],
        },
        {
          ...video,
          id: 'sim-video-lone',
          channels: [{ id: 'video-lone', upstream: 'healthy', model: 'sim-video' }],
        },
      ],
    });
    gateway = await startGateway(dialect, {
      config,
      clock,
      services: {
        random: seededRandom(7),
        breaker: { failureThreshold: 1_000, cooldownMs: 1_000, maxCooldownMs: 1_000 },
      },
    });
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
    await healthy.close();
    await hanging.close();
    await simulator.close();
  });

  const rowOf = (id: string) =>
    gateway.services.store.db
      .selectFrom('tasks')
      .select(['channel', 'upstream', 'status'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  it('a refused connection moves each task to the healthy channel: submitted once, polled and downloaded there, charged once', async () => {
    const { accountId, key } = await gateway.account(100_000_000);
    const before = healthy.requests.length;
    const tasks: TaskBody[] = [];
    for (let index = 0; index < 3; index += 1) {
      const created = await gateway.call('POST', '/v1/videos', {
        key,
        body: { model: 'sim-video', prompt: `a harbour ${index}`, seconds: 1, size: '320x240' },
      });
      expect(created.statusCode).toBe(202);
      tasks.push(created.json<TaskBody>());
    }
    let charged = 0;
    for (const created of tasks) {
      const task = await finishedTask(gateway, key, `/v1/videos/${created.id}`);
      expect(task.status).toBe('succeeded');
      expect(await rowOf(task.id)).toMatchObject({ channel: 'video-healthy', upstream: 'healthy' });
      const settled = await gateway.call('POST', `/v1/videos/${task.id}/settle`, {
        key,
        body: settleBodyOf(task),
      });
      expect(settled.statusCode).toBe(200);
      charged += task.billing.actual_amount ?? 0;
    }
    const sent = healthy.requests.slice(before);
    expect(sent.filter((request) => request === 'POST /videos')).toHaveLength(3);
    // Every poll and download went to the channel that took the task.
    for (const created of tasks) {
      const { upstream_task_id: upstreamId } = await gateway.services.store.db
        .selectFrom('tasks')
        .select('upstream_task_id')
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
      expect(sent).toContain(`GET /videos/${upstreamId ?? 'none'}`);
      expect(sent).toContain(`GET /videos/${upstreamId ?? 'none'}/content`);
    }
    expect(charged).toBeGreaterThan(0);
    expect(await gateway.balance(accountId)).toEqual({
      balance: 100_000_000 - charged,
      held: 0,
      available: 100_000_000 - charged,
    });
    const attempts = await gateway.admin('GET', '/admin/v1/channels');
    expect(attempts['data']).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: 'video-refused', in_flight: 0 })]),
    );
  });

  it('a submission that timed out after sending never moves: the task stays submission_unknown on its channel', async () => {
    const { accountId, key } = await gateway.account(100_000_000);
    const spareBefore = submissions(healthy);
    const created = await gateway.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video-hanging', prompt: 'a slow harbour', seconds: 1, size: '320x240' },
    });
    expect(created.statusCode).toBe(202);
    const task = created.json<TaskBody>();
    await workUntil(gateway, async () => (await rowOf(task.id)).status !== 'queued');
    expect(await rowOf(task.id)).toEqual({
      channel: 'video-hanging',
      upstream: 'hanging',
      status: 'submission_unknown',
    });
    expect(submissions(hanging)).toBe(1);
    expect(submissions(healthy)).toBe(spareBefore);
    // The hold stays until an operator resolves it: nothing was charged twice, nothing released.
    expect((await gateway.balance(accountId)).held).toBe(task.quote.quoted_amount);
  });

  it('a task whose every channel is disabled waits unsent, and is submitted once a channel is enabled', async () => {
    const { key } = await gateway.account(100_000_000);
    await gateway.admin('POST', '/admin/v1/channels/video-lone/disable', { reason: 'test' });
    const before = submissions(healthy);
    const created = await gateway.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video-lone', prompt: 'a quiet harbour', seconds: 1, size: '320x240' },
    });
    expect(created.statusCode).toBe(202);
    const task = created.json<TaskBody>();
    for (let tick = 0; tick < 3; tick += 1) await gateway.services.taskWorker.tick();
    const waiting = await gateway.services.store.db
      .selectFrom('tasks')
      .select(['status', 'submission'])
      .where('id', '=', task.id)
      .executeTakeFirstOrThrow();
    expect(waiting).toEqual({ status: 'queued', submission: 'pending' });
    expect(submissions(healthy)).toBe(before);
    await gateway.admin('POST', '/admin/v1/channels/video-lone/enable');
    // Due again after its back-off: make it due now rather than wait.
    await gateway.services.store.db
      .updateTable('tasks')
      .set({ due_at: 0 })
      .where('id', '=', task.id)
      .execute();
    const finished = await finishedTask(gateway, key, `/v1/videos/${task.id}`);
    expect(finished.status).toBe('succeeded');
    expect(submissions(healthy)).toBe(before + 1);
  });
});
