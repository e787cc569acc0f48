import { afterEach, expect, it, vi } from 'vitest';
import { OpenAiVideos } from '../../src/providers/openai-compatible/videos.js';
import { WorkerKilled, type WorkerStep } from '../../src/tasks/task-worker.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, shortTimeoutsConfig, type TestGateway } from '../helpers/gateway.js';
import {
  finishedTask,
  settleBodyOf,
  startTaskGateway,
  workUntil,
  type TaskBody,
} from '../helpers/tasks.js';

const BALANCE = 100_000_000;

describeEachDialect('failed, unknown and interrupted tasks on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  async function createVideo(client: TestGateway, key: string, prompt: string) {
    const created = await client.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video', prompt, seconds: 1, size: '320x240' },
    });
    expect(created.statusCode, created.body).toBe(202);
    return `/v1/videos/${created.json<TaskBody>().id}`;
  }

  it('a failed task releases its hold and charges nothing', async () => {
    gateway = await startTaskGateway(dialect);
    const { accountId, key } = await gateway.account(BALANCE);
    const path = await createVideo(gateway, key, 'storm [sim:task=fail]');
    const task = await finishedTask(gateway, key, path);
    expect(task).toMatchObject({
      status: 'failed',
      billing: { settlement_pending: false, state: 'released' },
      error: { code: expect.any(String) as string },
    });
    expect(task.settlement).toBeUndefined();
    expect(task.billing.actual_amount).toBeUndefined();
    expect(await gateway.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  });

  it('a failure the upstream billed shows its amount and settles like any other', async () => {
    gateway = await startTaskGateway(dialect);
    const { accountId, key } = await gateway.account(BALANCE);
    const path = await createVideo(gateway, key, 'storm [sim:task=fail_billed]');
    const task = await finishedTask(gateway, key, path);
    expect(task).toMatchObject({
      status: 'failed',
      billing: { settlement_pending: true, state: 'pending' },
    });
    expect(task.billing.actual_amount).toBeGreaterThan(0);
    const settled = await gateway.call('POST', `${path}/settle`, { key, body: settleBodyOf(task) });
    expect(settled.statusCode).toBe(200);
    expect(settled.json<TaskBody>().outputs).toBeUndefined();
    expect((await gateway.balance(accountId)).balance).toBe(
      BALANCE - (task.billing.actual_amount ?? 0),
    );
  });

  it('an unanswered submission is submission_unknown with its hold, never resubmitted, then found by a read-only look-up', async () => {
    gateway = await startTaskGateway(dialect, { config: shortTimeoutsConfig() });
    const client = gateway;
    const { accountId, key } = await client.account(BALANCE);
    const submissions = vi.spyOn(OpenAiVideos.prototype, 'submit');
    const path = await createVideo(client, key, 'fog [sim:task=unknown]');
    let seenUnknown = false;
    await workUntil(
      client,
      async () => {
        const task = (await client.call('GET', path, { key })).json<TaskBody>();
        if (task.status === 'submission_unknown') {
          seenUnknown = true;
          expect(task.billing.state).toBe('reserved');
          expect((await client.balance(accountId)).held).toBe(task.billing.reserved_amount);
          // Make the look-up due now instead of in a few seconds.
          await client.services.store.db
            .updateTable('tasks')
            .set({ due_at: 0 })
            .where('status', '=', 'submission_unknown')
            .execute();
        }
        return task.status === 'succeeded';
      },
      20_000,
    );
    expect(seenUnknown).toBe(true);
    expect(submissions).toHaveBeenCalledTimes(1);
  });

  it('an image whose answer never came waits for an operator, who releases it once, with a reason', async () => {
    gateway = await startTaskGateway(dialect, { config: shortTimeoutsConfig() });
    const client = gateway;
    const { accountId, key } = await client.account(BALANCE);
    const created = await client.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: 'fog [sim:task=unknown]', size: '256x256' },
    });
    const id = created.json<TaskBody>().id;
    await workUntil(client, async () => {
      const task = (await client.call('GET', `/v1/images/${id}`, { key })).json<TaskBody>();
      return task.status === 'submission_unknown';
    });
    // No look-up exists for images: nothing is due until an operator acts.
    const listed = await client.admin('GET', '/admin/v1/tasks?status=submission_unknown');
    expect((listed['data'] as { id: string; due_at: unknown }[])[0]).toMatchObject({
      id,
      due_at: null,
    });
    const resolve = (body: unknown) =>
      client.app.inject({
        method: 'POST',
        url: `/admin/v1/tasks/${id}/resolve`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: body as object,
      });
    expect((await resolve({ action: 'release' })).statusCode).toBe(400);
    expect(
      (await resolve({ action: 'attach', upstream_task_id: 'x', reason: 'r' })).statusCode,
    ).toBe(400);
    const released = await resolve({ action: 'release', reason: 'upstream says it never ran' });
    expect(released.statusCode, released.body).toBe(200);
    expect(released.json()).toMatchObject({
      status: 'failed',
      billing: { state: 'released' },
      resolution: { action: 'release', reason: 'upstream says it never ran' },
    });
    expect((await resolve({ action: 'release', reason: 'twice' })).statusCode).toBe(409);
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  });

  it.each<WorkerStep>(['before_submit', 'after_submit', 'mid_poll', 'mid_download'])(
    'a worker killed at %s leaves a task another worker finishes: one submission, one charge',
    async (step) => {
      let killed = false;
      gateway = await startTaskGateway(dialect, {
        services: {
          worker: {
            leaseMs: 300,
            fault: (at) => {
              if (at === step && !killed) {
                killed = true;
                throw new WorkerKilled(at);
              }
            },
          },
        },
      });
      const client = gateway;
      const { accountId, key } = await client.account(BALANCE);
      const submissions = vi.spyOn(OpenAiVideos.prototype, 'submit');
      const path = await createVideo(client, key, 'a quiet harbour');
      await workUntil(
        client,
        async () => {
          const row = await client.services.store.db
            .selectFrom('tasks')
            .select(['status', 'submission', 'due_at'])
            .executeTakeFirstOrThrow();
          // An unknown submission is looked up at once rather than after its back-off.
          if (row.status === 'submission_unknown' && (row.due_at ?? 0) > 0)
            await client.services.store.db.updateTable('tasks').set({ due_at: 0 }).execute();
          return row.status === 'succeeded';
        },
        20_000,
      );
      expect(killed).toBe(true);
      expect(submissions).toHaveBeenCalledTimes(1);
      const task = (await client.call('GET', path, { key })).json<TaskBody>();
      const settled = await client.call('POST', `${path}/settle`, {
        key,
        body: settleBodyOf(task),
      });
      expect(settled.statusCode).toBe(200);
      const assets = await client.services.store.db
        .selectFrom('assets')
        .select('id')
        .where('task_id', '=', task.id)
        .execute();
      expect(assets).toHaveLength(1);
      expect(await client.balance(accountId)).toEqual({
        balance: BALANCE - (task.billing.actual_amount ?? 0),
        held: 0,
        available: BALANCE - (task.billing.actual_amount ?? 0),
      });
    },
    30_000,
  );
});
