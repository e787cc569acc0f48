import type { H3Task } from '@tollgate/protocol';
import { afterEach, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { startArkFront, type ArkFront } from '../helpers/ark-front.js';
import { skippingClock, type SkippingClock } from '../helpers/clock.js';
import { describeEachDialect, type TestDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { finishedH3, h3QuoteAndSubmit, h3SettleBody } from '../helpers/h3.js';
import { workUntil } from '../helpers/tasks.js';

/**
 * Issue 34, item 6: Volcengine Ark's video task API as the real service behaves, through the
 * gateway, against the simulator answering as real Ark (`dialect: ark`, every extension off) on
 * one clock. The risks: a create whose answer was lost is sent again (a second job Ark bills),
 * or looked up by a key Ark cannot search; a task past Ark's 7-day query window is polled
 * forever with its money held; a video whose 24-hour URL has expired is retried for nothing,
 * or charged though never delivered; a video reported in `frames` billed other than the same
 * video reported in `duration`.
 */

const BALANCE = 10_000_000;
const TASKS = '/contents/generations/tasks';
const DAY_MS = 86_400_000;

interface ArkGateway {
  readonly gateway: TestGateway;
  readonly front: ArkFront;
  readonly simulator: Simulator;
  readonly clock: SkippingClock;
  close(): Promise<void>;
}

/**
 * A gateway whose `sim-h3` model is served by an upstream of kind `ark` with `dialect: ark`,
 * through a recording front (helpers/ark-front.ts) to the simulator's Ark routes; the gateway
 * and the simulator share a skipping clock.
 */
async function startArkGateway(dialect: TestDialect): Promise<ArkGateway> {
  const clock = skippingClock();
  const simulator = await startSimulator({ now: () => clock.now() });
  const front = await startArkFront(simulator);
  const h3Model = defaultConfig.models.find((model) => model.id === 'sim-h3');
  if (h3Model === undefined) throw new Error('the default configuration has no sim-h3');
  const config = testConfig({
    upstreams: {
      ark: {
        kind: 'ark',
        dialect: 'ark',
        base_url: front.url,
        timeouts: { connect_ms: 1_000, first_byte_ms: 5_000, idle_ms: 5_000 },
      },
    },
    models: [{ ...h3Model, upstream: 'ark' }],
  });
  const gateway = await startGateway(dialect, { config, clock });
  return {
    gateway,
    front,
    simulator,
    clock,
    async close() {
      await gateway.close();
      await front.close();
      await simulator.close();
    },
  };
}

const generate = (prompt: string) => ({
  action: 'generate',
  prompt,
  parameters: { resolution: '720p', ratio: '16:9', duration: 4, watermark: false },
});

/** Submits, asserts 202, and works until the task was sent (it is then no longer `queued`). */
async function submitted(gateway: TestGateway, key: string, prompt: string): Promise<H3Task> {
  const { response } = await h3QuoteAndSubmit(gateway, key, generate(prompt));
  expect(response.statusCode, response.body).toBe(202);
  const task = response.json<H3Task>();
  await workUntil(
    gateway,
    async () => (await gateway.services.taskStore.byId(task.id))?.status !== 'queued',
  );
  return task;
}

describeEachDialect('an Ark upstream as the real service behaves, on $name', (dialect) => {
  let ark: ArkGateway | undefined;
  afterEach(async () => {
    await ark?.gateway.expectLedgerClean();
    await ark?.close();
    ark = undefined;
  });

  it('a create whose answer was lost waits for an operator: never sent again, never looked up by key', async () => {
    ark = await startArkGateway(dialect);
    const { gateway, front, clock } = ark;
    const { accountId, key } = await gateway.account(BALANCE);
    front.submission = 'reset_after_send';
    const task = await submitted(gateway, key, 'a fox in the snow');
    const row = await gateway.services.taskStore.byId(task.id);
    expect(row).toMatchObject({
      status: 'submission_unknown',
      submission: 'sending',
      due_at: null,
    });
    // Ark made the job: its answer alone was lost (Ark lists it by status, not by our key).
    const listed = await fetch(`${ark.simulator.url}/dialect/ark/v1${TASKS}`);
    expect(((await listed.json()) as { total: number }).total).toBe(1);

    // An hour on, the worker has nothing to do with it: no resubmission, no look-up by key.
    clock.advance(3_600_000);
    for (let tick = 0; tick < 3; tick += 1) await gateway.services.taskWorker.tick();
    expect(front.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      `POST ${TASKS}`,
    ]);
    const queue = await gateway.admin('GET', '/admin/v1/tasks?status=submission_unknown');
    expect((queue['data'] as { id: string }[]).map((queued) => queued.id)).toEqual([task.id]);
    expect(await gateway.balance(accountId)).toEqual({
      balance: BALANCE,
      held: task.quote.quoted_amount,
      available: BALANCE - task.quote.quoted_amount,
    });

    // The operator, having found nothing to attach, releases it: nothing charged.
    const released = await gateway.admin('POST', `/admin/v1/tasks/${task.id}/resolve`, {
      action: 'release',
      reason: 'not found in the Ark console',
    });
    expect(released).toMatchObject({ status: 'FAILED', billing: { state: 'released' } });
    expect(await gateway.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  });

  it("past Ark's 7-day query window a running task goes to the operator queue, not polled again", async () => {
    ark = await startArkGateway(dialect);
    const { gateway, front, clock } = ark;
    const { accountId, key } = await gateway.account(BALANCE);
    const task = await submitted(gateway, key, 'a slow river [sim:task_seconds=600]');
    expect((await gateway.services.taskStore.byId(task.id))?.status).toBe('running');

    // The gateway was down for eight days: Ark now answers nothing of a task that old.
    clock.advance(8 * DAY_MS);
    const before = front.requests.length;
    const ended = await finishedH3(gateway, key, task.id);
    expect(front.requests.slice(before)).toEqual([]);
    expect(ended).toMatchObject({ status: 'submission_unknown', billing: { state: 'reserved' } });
    const operatorView = await gateway.admin('GET', `/admin/v1/tasks/${task.id}`);
    expect(operatorView).toMatchObject({ status: 'submission_unknown', due_at: null });
    expect(String(operatorView['note'])).toContain('for 7 days after its submission');
    expect(await gateway.balance(accountId)).toMatchObject({ held: task.quote.quoted_amount });

    const released = await gateway.admin('POST', `/admin/v1/tasks/${task.id}/resolve`, {
      action: 'release',
      reason: 'past the Ark query window',
    });
    expect(released).toMatchObject({ status: 'FAILED', billing: { state: 'released' } });
  });

  it('a video whose 24-hour URL expired before it was seen fails RESULT_EXPIRED: never fetched, nothing charged', async () => {
    ark = await startArkGateway(dialect);
    const { gateway, front, clock } = ark;
    const { accountId, key } = await gateway.account(BALANCE);
    const task = await submitted(gateway, key, 'a red kite [sim:task_seconds=2]');

    // Ark made the video, but the gateway comes back 25 hours later: the URL has expired.
    clock.advance(25 * 3_600_000);
    const ended = await finishedH3(gateway, key, task.id);
    expect(ended).toMatchObject({
      status: 'FAILED',
      error: { code: 'RESULT_EXPIRED' },
      billing: { state: 'released', settlement_pending: false },
    });
    expect(ended.error?.message).toMatch(/result URL expired at .*nothing was charged/);
    expect(ended.billing.actual_amount).toBeUndefined();
    expect(front.requests.some((request) => request.path.includes('/video.mp4'))).toBe(false);
    expect(await gateway.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  });

  it('a download that keeps failing is retried from the kept URL until that expires, then fails RESULT_EXPIRED', async () => {
    ark = await startArkGateway(dialect);
    const { gateway, front, clock } = ark;
    const { accountId, key } = await gateway.account(BALANCE);
    front.videoStatus = 503;
    const task = await submitted(gateway, key, 'a grey heron [sim:task_seconds=1]');
    await workUntil(
      gateway,
      async () => ((await gateway.services.taskStore.byId(task.id))?.download_failures ?? 0) >= 1,
    );
    expect(await gateway.services.taskStore.byId(task.id)).toMatchObject({ status: 'running' });
    const downloads = () => front.requests.filter((request) => request.path.includes('/video.mp4'));
    const tried = downloads().length;
    expect(tried).toBeGreaterThanOrEqual(1);

    // The next try comes after the URL's 24 hours: it is not made, the task fails.
    clock.advance(25 * 3_600_000);
    const ended = await finishedH3(gateway, key, task.id);
    expect(ended).toMatchObject({
      status: 'FAILED',
      error: { code: 'RESULT_EXPIRED' },
      billing: { state: 'released' },
    });
    expect(downloads()).toHaveLength(tried);
    expect(await gateway.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  });

  it('downloads the video in the step that sees it succeed, and bills the same seconds whether Ark reports duration or frames', async () => {
    ark = await startArkGateway(dialect);
    const { gateway, front } = ark;
    const { accountId, key } = await gateway.account(BALANCE);
    const prompt = 'a lighthouse at dusk [sim:deliver_seconds=3]';

    const byDuration = await finishedH3(gateway, key, (await submitted(gateway, key, prompt)).id);
    // The first read that answered `succeeded` is followed at once by the video's download.
    const seen = front.requests.findIndex((request) => request.taskStatus === 'succeeded');
    expect(seen).toBeGreaterThanOrEqual(0);
    expect(front.requests[seen + 1]).toMatchObject({ method: 'GET', status: 200 });
    expect(front.requests[seen + 1]?.path).toMatch(/\/video\.mp4\?X-Tos-Algorithm=/);
    expect(front.requests.filter((request) => request.taskStatus === 'succeeded')).toHaveLength(1);

    // The same video as Ark reports it for a task created with `frames`: its frames at its frame
    // rate (Ark's `framespersecond`, beside `duration` otherwise), and no `duration`.
    const framesAnswers: Record<string, unknown>[] = [];
    front.rewriteTask = ({ duration, ...task }) => {
      const rate = task['framespersecond'];
      if (typeof duration !== 'number' || typeof rate !== 'number') return { duration, ...task };
      const answered = { ...task, frames: duration * rate };
      framesAnswers.push(answered);
      return answered;
    };
    const byFrames = await finishedH3(gateway, key, (await submitted(gateway, key, prompt)).id);
    // 3 s of the simulator's 4 frames per second.
    expect(framesAnswers.filter((answer) => answer['status'] === 'succeeded')).toEqual([
      expect.objectContaining({ frames: 12, framespersecond: 4 }),
    ]);

    for (const task of [byDuration, byFrames]) {
      expect(task.status).toBe('succeeded');
      // 3 s delivered of 4 asked, at 720p without audio (40,000 per second).
      expect(task.billing).toMatchObject({ actual_amount: 120_000, state: 'pending' });
      expect(task.billing.line_items?.[0]).toMatchObject({
        name: 'video_second',
        quantity: 3,
        measured: { output_seconds: 3 },
      });
      const settled = await gateway.call('POST', `/v1/h3/tasks/${task.id}/settle`, {
        key,
        body: h3SettleBody(task),
      });
      expect(settled.statusCode, settled.body).toBe(200);
    }
    expect(await gateway.balance(accountId)).toEqual({
      balance: BALANCE - 240_000,
      held: 0,
      available: BALANCE - 240_000,
    });
  });
});
