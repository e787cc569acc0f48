import { Readable, Writable } from 'node:stream';
import { afterEach, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { OpenAiImages } from '../../src/providers/openai-compatible/images.js';
import { OpenAiVideos } from '../../src/providers/openai-compatible/videos.js';
import type { SubmitResult } from '../../src/providers/task-provider.js';
import { TaskStore } from '../../src/tasks/task-store.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { testConfig, type TestGateway } from '../helpers/gateway.js';
import {
  expectChargedActualOnce,
  settleBodyOf,
  startTaskGateway,
  workUntil,
  type TaskBody,
} from '../helpers/tasks.js';

const BALANCE = 100_000_000;

/** The upstream's id in the first answer a call-through spy on `submit` saw. */
async function firstUpstreamId(spy: { mock: { results: { value: unknown }[] } }) {
  const answer = (await spy.mock.results[0]?.value) as SubmitResult | undefined;
  return answer?.upstreamTaskId ?? 'none';
}

/**
 * The step's own write recording an accepted submission (`queued` → `to`, under its claim)
 * fails with a database error `times` times, as a dropped connection or a failed commit would;
 * every other write goes through. Returns how many failed.
 */
function failRecordingWrite(to: 'running' | 'succeeded', times: number): () => number {
  const move = Object.getOwnPropertyDescriptor(TaskStore.prototype, 'move')
    ?.value as TaskStore['move'];
  let failed = 0;
  vi.spyOn(TaskStore.prototype, 'move').mockImplementation(async function (
    this: TaskStore,
    ...args: Parameters<TaskStore['move']>
  ) {
    const status = args[1].status;
    if (failed < times && status?.from === 'queued' && status.to === to) {
      failed += 1;
      throw new Error('Connection terminated unexpectedly');
    }
    return move.apply(this, args);
  });
  return () => failed;
}

/**
 * Issue 35, Found 14: accepted work lost on one transient database error. When the write that
 * records an accepted submission (`queued` → `running` for a video, `queued` → `succeeded` for
 * an image) failed once, only a lost claim reached the late-answer path; any other error fell
 * to the worker's generic catch, which logged the task but not the upstream's id, and the job
 * the upstream accepted (and bills) was forgotten: the next step found the task mid-submission
 * and left it `submission_unknown` with nothing to look up. Now any error after the upstream
 * answered takes the guarded late-answer path, and every path that drops an answer logs the
 * upstream's id. The simulator's look-up is turned off: nothing else could find the job again.
 */
describeEachDialect('an accepted submission its step could not record on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  let lines: string[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function start() {
    lines = [];
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => void (lines.push(chunk.toString()), done()),
    });
    gateway = await startTaskGateway(dialect, {
      config: testConfig({
        upstreams: { simulator: { kind: 'simulator', task_lookup: false } },
      }),
      services: { logger: createLogger('info', sink) },
    });
    return { client: gateway, ...(await gateway.account(BALANCE)) };
  }

  /** Log lines (parsed) that name `upstreamTaskId`. */
  const loggedWith = (upstreamTaskId: string) =>
    lines
      .map((line) => JSON.parse(line) as { upstreamTaskId?: unknown; taskId?: unknown })
      .filter((line) => line.upstreamTaskId === upstreamTaskId);

  async function settle(client: TestGateway, key: string, accountId: string, path: string) {
    const task = (await client.call('GET', path, { key })).json<TaskBody>();
    expect(task.status).toBe('succeeded');
    const settled = await client.call('POST', `${path}/settle`, {
      key,
      body: settleBodyOf(task),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    await expectChargedActualOnce(client, accountId, BALANCE, task);
  }

  it('a video whose queued → running write fails once keeps its upstream id and finishes: one job, one charge', async () => {
    const { client, key, accountId } = await start();
    const submissions = vi.spyOn(OpenAiVideos.prototype, 'submit');
    const failed = failRecordingWrite('running', 1);
    const created = await client.call('POST', '/v1/videos', {
      key,
      body: {
        model: 'sim-video',
        prompt: 'a harbour at dawn [sim:task_seconds=0]',
        seconds: 1,
        size: '320x240',
      },
    });
    expect(created.statusCode, created.body).toBe(202);
    const id = created.json<TaskBody>().id;
    expect(await client.services.taskWorker.tick()).toBe(1);
    expect(failed()).toBe(1);
    const upstreamTaskId = await firstUpstreamId(submissions);
    expect(upstreamTaskId).toMatch(/^video_/);
    // Kept by the late-answer path at once: running with the upstream's id, due again now.
    expect(await client.services.taskStore.byId(id)).toMatchObject({
      status: 'running',
      submission: 'accepted',
      upstream_task_id: upstreamTaskId,
      claim_token: null,
    });
    expect(loggedWith(upstreamTaskId).length).toBeGreaterThan(0);
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(id))?.status === 'succeeded',
      20_000,
    );
    await settle(client, key, accountId, `/v1/videos/${id}`);
    expect(submissions).toHaveBeenCalledTimes(1);
  });

  it('an image whose queued → succeeded write fails once keeps its stored output and finishes: one job, one charge', async () => {
    const { client, key, accountId } = await start();
    const submissions = vi.spyOn(OpenAiImages.prototype, 'submit');
    const failed = failRecordingWrite('succeeded', 1);
    const created = await client.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: 'a lantern in the rain', size: '256x256' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const id = created.json<TaskBody>().id;
    expect(await client.services.taskWorker.tick()).toBe(1);
    expect(failed()).toBe(1);
    const upstreamTaskId = await firstUpstreamId(submissions);
    const row = await client.services.taskStore.byId(id);
    expect(row).toMatchObject({
      status: 'running',
      submission: 'accepted',
      upstream_task_id: upstreamTaskId,
    });
    expect(JSON.parse(row?.result_sources ?? 'null')).toMatchObject({ stored: 1 });
    expect(loggedWith(upstreamTaskId).length).toBeGreaterThan(0);
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(id))?.status === 'succeeded',
      20_000,
    );
    // The output the first step stored is the one delivered: one asset, downloaded once.
    const assets = await client.services.store.db
      .selectFrom('assets')
      .selectAll()
      .where('task_id', '=', id)
      .execute();
    expect(assets).toHaveLength(1);
    await settle(client, key, accountId, `/v1/images/${id}`);
    expect(submissions).toHaveBeenCalledTimes(1);
  });

  it('an answer that cannot be written at all (the keep fails too) is logged with its upstream id, never nameless', async () => {
    const { client, key } = await start();
    const submissions = vi.spyOn(OpenAiVideos.prototype, 'submit');
    // The step's write and the late-answer path's both fail: the database stays down.
    const failed = failRecordingWrite('running', 2);
    const created = await client.call('POST', '/v1/videos', {
      key,
      body: {
        model: 'sim-video',
        prompt: 'a harbour at night [sim:task_seconds=0]',
        seconds: 1,
        size: '320x240',
      },
    });
    expect(created.statusCode, created.body).toBe(202);
    const id = created.json<TaskBody>().id;
    expect(await client.services.taskWorker.tick()).toBe(1);
    expect(failed()).toBe(2);
    const upstreamTaskId = await firstUpstreamId(submissions);
    expect(upstreamTaskId).toMatch(/^video_/);
    // The row could not say it: the log does, at error level, with the task.
    const logged = loggedWith(upstreamTaskId) as { taskId?: unknown; level?: unknown }[];
    expect(logged).toContainEqual(expect.objectContaining({ taskId: id, level: 50 }));
    expect(await client.services.taskStore.byId(id)).toMatchObject({
      status: 'queued',
      submission: 'sending',
      upstream_task_id: null,
    });
    // It is never submitted again; an operator attaches it by the logged id.
    await client.services.store.db
      .updateTable('tasks')
      .set({ due_at: 0 })
      .where('id', '=', id)
      .execute();
    await client.services.taskWorker.tick();
    expect((await client.services.taskStore.byId(id))?.status).toBe('submission_unknown');
    const attached = await client.admin('POST', `/admin/v1/tasks/${id}/resolve`, {
      action: 'attach',
      upstream_task_id: upstreamTaskId,
      reason: 'found in the log',
    });
    expect(attached).toMatchObject({ status: 'running' });
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(id))?.status === 'succeeded',
      20_000,
    );
    expect(submissions).toHaveBeenCalledTimes(1);
  });
  it('an image answer whose bytes cannot be stored is parked for an operator with its upstream id', async () => {
    const { client, key, accountId } = await start();
    const original = Object.getOwnPropertyDescriptor(OpenAiImages.prototype, 'submit')
      ?.value as OpenAiImages['submit'];
    const submissions = vi
      .spyOn(OpenAiImages.prototype, 'submit')
      .mockImplementation(async function (
        this: OpenAiImages,
        ...args: Parameters<OpenAiImages['submit']>
      ) {
        const answer = await original.apply(this, args);
        if (answer.kind !== 'completed') return answer;
        // `b64_json` that is no picture: storing it fails the same way every time.
        const garbage = () =>
          Promise.resolve({ body: Readable.from([Buffer.from('not a picture')]), mediaType: null });
        return { ...answer, outputs: [{ open: garbage }] };
      });
    const created = await client.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: 'a lantern in the fog', size: '256x256' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const id = created.json<TaskBody>().id;
    expect(await client.services.taskWorker.tick()).toBe(1);
    const upstreamTaskId = await firstUpstreamId(submissions);
    // Not left mid-submission for the next step to forget: in the operator queue, named.
    const row = await client.services.taskStore.byId(id);
    expect(row).toMatchObject({
      status: 'submission_unknown',
      submission: 'accepted',
      upstream_task_id: upstreamTaskId,
      due_at: null,
    });
    expect(row?.error_message).toContain(upstreamTaskId);
    const late = await client.services.metrics.taskLateAnswers.get();
    expect(late.values).toContainEqual(
      expect.objectContaining({ labels: { outcome: 'parked' }, value: 1 }),
    );
    expect(loggedWith(upstreamTaskId).length).toBeGreaterThan(0);
    expect((await client.balance(accountId)).held).toBeGreaterThan(0);
    const released = await client.admin('POST', `/admin/v1/tasks/${id}/resolve`, {
      action: 'release',
      reason: 'the upstream answered with bytes that are no picture',
    });
    expect(released).toMatchObject({ status: 'failed' });
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
    expect(submissions).toHaveBeenCalledTimes(1);
  });
});
