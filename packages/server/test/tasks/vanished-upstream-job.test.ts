import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, testConfig, type TestGateway } from '../helpers/gateway.js';
import { startTaskGateway, workUntil, type TaskBody } from '../helpers/tasks.js';

const BALANCE = 100_000_000;

/**
 * Issue 18, Found 2 / Deliver 7: an upstream that forgot a job (a restarted embedded simulator,
 * an upstream that expires jobs) answers every poll with 404. The task must not be polled
 * forever with its money held: past `tasks.vanished_after_ms` it goes to the operator queue as
 * `submission_unknown` (hold kept), and an operator can resolve any unfinished task.
 */
describeEachDialect('an upstream job that vanished on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  const resolve = (client: TestGateway, id: string, body: object) =>
    client.app.inject({
      method: 'POST',
      url: `/admin/v1/tasks/${id}/resolve`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: body,
    });

  async function runningVideo(client: TestGateway, key: string) {
    const created = await client.call('POST', '/v1/videos', {
      key,
      body: {
        model: 'sim-video',
        prompt: 'a long night [sim:task_seconds=600]',
        seconds: 1,
        size: '320x240',
      },
    });
    expect(created.statusCode, created.body).toBe(202);
    const task = created.json<TaskBody>();
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(task.id))?.status === 'running',
    );
    return task;
  }

  it('a job the upstream answers 404 for ends in the operator queue with its hold, and an operator releases it', async () => {
    gateway = await startTaskGateway(dialect, {
      config: testConfig({ tasks: { vanished_after_ms: 1 } }),
    });
    const client = gateway;
    const { accountId, key } = await client.account(BALANCE);
    const task = await runningVideo(client, key);
    const db = client.services.store.db;
    // The upstream forgets the job: every poll of its id now answers 404 (no such job).
    await db
      .updateTable('tasks')
      .set({ upstream_task_id: 'video_00000000000000000000000000000000' })
      .where('id', '=', task.id)
      .execute();
    await workUntil(client, async () => {
      const row = await client.services.taskStore.byId(task.id);
      if (row?.status === 'running')
        await db.updateTable('tasks').set({ due_at: 0 }).where('id', '=', task.id).execute();
      return row?.status !== 'running';
    });
    const operatorView = await client.admin('GET', `/admin/v1/tasks/${task.id}`);
    expect(operatorView).toMatchObject({
      status: 'submission_unknown',
      upstream_task_id: 'video_00000000000000000000000000000000',
      submission: 'accepted',
      due_at: null,
      billing: { state: 'reserved' },
    });
    expect(String(operatorView['note'])).toContain('no such job');
    const queue = await client.admin('GET', '/admin/v1/tasks?status=submission_unknown');
    expect((queue['data'] as { id: string }[]).map((row) => row.id)).toEqual([task.id]);
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: task.quote.quoted_amount,
      available: BALANCE - task.quote.quoted_amount,
    });

    const released = await resolve(client, task.id, {
      action: 'release',
      reason: 'the upstream lost the job',
    });
    expect(released.statusCode, released.body).toBe(200);
    expect(released.json()).toMatchObject({
      status: 'failed',
      billing: { state: 'released', settlement_pending: false },
      resolution: { action: 'release', reason: 'the upstream lost the job' },
    });
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
    // The release is journalled with the hold: one release movement naming the operator's reason.
    const journal = await db
      .selectFrom('journal')
      .select(['kind', 'held_delta', 'reason'])
      .where('account_id', '=', accountId)
      .where('reason', '=', 'operator: the upstream lost the job')
      .execute();
    expect(journal).toEqual([expect.objectContaining({ held_delta: -task.quote.quoted_amount })]);
  });

  it('an operator can release a task that is still running, once; a finished task is 409', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { accountId, key } = await client.account(BALANCE);
    const task = await runningVideo(client, key);
    const released = await resolve(client, task.id, {
      action: 'release',
      reason: 'the caller asked to cancel',
    });
    expect(released.statusCode, released.body).toBe(200);
    expect(released.json()).toMatchObject({ status: 'failed', billing: { state: 'released' } });
    const again = await resolve(client, task.id, { action: 'release', reason: 'twice' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: { code: 'SETTLEMENT_NOT_ALLOWED' } });
    // The worker's next step on it changes nothing.
    await client.services.taskWorker.tick();
    expect((await client.services.taskStore.byId(task.id))?.status).toBe('failed');
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  });
});
