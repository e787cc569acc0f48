import { afterEach, expect, it, vi } from 'vitest';
import { OpenAiVideos } from '../../src/providers/openai-compatible/videos.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, type TestGateway } from '../helpers/gateway.js';
import { countCreated, h3Quote, settledH3, submitBody, type H3Input } from '../helpers/h3.js';
import { finishedTask, startTaskGateway, workUntil, type TaskBody } from '../helpers/tasks.js';

const BALANCE = 100_000_000;

/**
 * Issue 18, Found 8 / Deliver 5 and Found 10: the worker parses a task's stored JSON with the
 * schemas that wrote it. A row that fails its schema (or names a price version that is gone)
 * fails the same way on every retry: the task stops in the operator queue with the reason in
 * its note and its hold kept — never sent on garbage, never priced or charged on it, its
 * outputs never downloaded — and an operator releases it.
 */
describeEachDialect('a corrupted task row on $name', (dialect) => {
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
    return created.json<TaskBody>();
  }

  const admin = (client: TestGateway, method: 'GET' | 'POST', url: string, payload?: object) =>
    client.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ...(payload === undefined ? {} : { payload }),
    });

  /** Operators still see the task in their list, with the column that failed its schema named. */
  async function expectListedUnreadable(client: TestGateway, id: string, column: string) {
    const listed = await admin(client, 'GET', '/admin/v1/tasks');
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json<{ data: Record<string, unknown>[] }>().data).toContainEqual(
      expect.objectContaining({
        id,
        unreadable: expect.stringContaining(`stored ${column} does not match`) as unknown,
      }),
    );
  }

  const taskAssets = (client: TestGateway, id: string) =>
    client.services.store.db.selectFrom('assets').select('id').where('task_id', '=', id).execute();

  /** The operator releases it (the queue works on it), and the account is whole again. */
  async function releaseAndCheck(client: TestGateway, accountId: string, id: string) {
    const released = await client.services.taskOperations.resolve(id, {
      action: 'release',
      reason: 'corrupt row',
    });
    expect(released).toMatchObject({ status: 'failed', billing: { state: 'released' } });
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  }

  it('a queued task whose input fails its schema is never submitted and waits for an operator, hold kept', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { accountId, key } = await client.account(BALANCE);
    const submissions = vi.spyOn(OpenAiVideos.prototype, 'submit');
    const task = await createVideo(client, key, 'a fox');
    await client.services.store.db
      .updateTable('tasks')
      .set({ input: JSON.stringify({ seconds: 'lots', size: '320x240' }) })
      .where('id', '=', task.id)
      .execute();

    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(task.id))?.status === 'submission_unknown',
    );
    expect(submissions).not.toHaveBeenCalled();
    const row = await client.services.taskStore.byId(task.id);
    expect(row).toMatchObject({ submission: 'pending', billing_state: 'reserved', due_at: null });
    expect(row?.error_message).toMatch(/stopped for an operator: .*stored input does not match/);
    // It is not retried: further ticks change nothing.
    await client.services.taskWorker.tick();
    expect((await client.services.taskStore.byId(task.id))?.updated_at).toBe(row?.updated_at);
    expect(await client.balance(accountId)).toMatchObject({
      balance: BALANCE,
      held: task.quote.quoted_amount,
    });
    // The operator queue shows it with the reason.
    const listed = await admin(client, 'GET', '/admin/v1/tasks?status=submission_unknown');
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json<{ data: { id: string; note?: string }[] }>().data).toContainEqual(
      expect.objectContaining({
        id: task.id,
        note: expect.stringMatching(/stored input/) as unknown,
      }),
    );
    await releaseAndCheck(client, accountId, task.id);
  });

  it('a running task whose input is corrupted stops before its outputs are downloaded or priced', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { accountId, key } = await client.account(BALANCE);
    const task = await createVideo(client, key, 'a quick fox [sim:task_seconds=1]');
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(task.id))?.status === 'running',
    );
    await client.services.store.db
      .updateTable('tasks')
      .set({ input: '{"not":"a video input"}' })
      .where('id', '=', task.id)
      .execute();

    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(task.id))?.status === 'submission_unknown',
    );
    const row = await client.services.taskStore.byId(task.id);
    expect(row).toMatchObject({ billing_state: 'reserved', actual_amount: null, due_at: null });
    expect(row?.upstream_task_id).not.toBeNull();
    expect(await taskAssets(client, task.id)).toEqual([]);
    await releaseAndCheck(client, accountId, task.id);
  });

  it('a finished task whose price version is gone stops for an operator without downloading its outputs', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { accountId, key } = await client.account(BALANCE);
    const task = await createVideo(client, key, 'a quick fox [sim:task_seconds=1]');
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(task.id))?.status === 'running',
    );
    await client.services.store.db
      .updateTable('tasks')
      .set({ price_version: 'pv_gone' })
      .where('id', '=', task.id)
      .execute();

    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(task.id))?.status === 'submission_unknown',
    );
    const row = await client.services.taskStore.byId(task.id);
    expect(row?.error_message).toMatch(/price version pv_gone is not in the store/);
    expect(row).toMatchObject({ billing_state: 'reserved', actual_amount: null });
    expect(await taskAssets(client, task.id)).toEqual([]);
    await releaseAndCheck(client, accountId, task.id);
  });

  it('a task whose stored line items fail their schema is still listed for operators, its reason shown', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { key } = await client.account(BALANCE);
    const task = await createVideo(client, key, 'a fox');
    const done = await finishedTask(client, key, `/v1/videos/${task.id}`);
    expect(done.status).toBe('succeeded');
    await client.services.store.db
      .updateTable('tasks')
      .set({ line_items: '[{"name":"gold","amount":-1}]' })
      .where('id', '=', task.id)
      .execute();

    await expectListedUnreadable(client, task.id, 'line_items');
    // The caller is never shown a quote built on it.
    const read = await client.call('GET', `/v1/videos/${task.id}`, { key });
    expect(read.statusCode).toBe(500);
    expect(read.body).not.toMatch(/gold/);
    // Its hold still goes back with the operator's release (the settlement window's path).
    const released = await admin(client, 'POST', `/admin/v1/tasks/${task.id}/resolve`, {
      action: 'release',
      reason: 'corrupt line items',
    });
    expect(released.statusCode, released.body).toBe(200);
  });
  it("a task whose stored resolution fails its schema is listed for operators, its reason shown; the caller's read is a 500, not the garbage", async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { key, accountId } = await client.account(BALANCE);
    const task = await createVideo(client, key, 'a heron');
    const released = await admin(client, 'POST', `/admin/v1/tasks/${task.id}/resolve`, {
      action: 'release',
      reason: 'not wanted',
    });
    expect(released.statusCode, released.body).toBe(200);
    expect(released.json()).toMatchObject({
      resolution: { action: 'release', reason: 'not wanted', by: 'operator' },
    });
    await client.services.store.db
      .updateTable('tasks')
      .set({ resolution: '{"action":"refund","by":"mallory","amount":999}' })
      .where('id', '=', task.id)
      .execute();

    await expectListedUnreadable(client, task.id, 'resolution');
    const read = await client.call('GET', `/v1/videos/${task.id}`, { key });
    expect(read.statusCode).toBe(500);
    expect(read.body).not.toMatch(/mallory|refund/);
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  });

  it('an H3 source task whose stored input fails its schema is refused as a source: 500, nothing created, held or charged', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { key, accountId } = await client.account(BALANCE);
    const source = await settledH3(client, key, {
      action: 'generate',
      prompt: 'a fox in snow',
      parameters: { resolution: '480p', ratio: '16:9', duration: 4 },
    });
    const regenerate: H3Input = { action: 'regenerate', source_task_id: source.id };
    // Quoted while the source was readable: the submit below echoes a valid quote.
    const quote = await h3Quote(client, key, regenerate);
    for (const garbage of ['{}', '{"action":5}']) {
      await client.services.store.db
        .updateTable('tasks')
        .set({ input: garbage })
        .where('id', '=', source.id)
        .execute();
      const before = { ...(await countCreated(client)), balance: await client.balance(accountId) };
      for (const body of [
        submitBody(regenerate, quote),
        { model: 'sim-h3', ...regenerate, operation: 'quote' },
      ]) {
        const answer = await client.call('POST', '/v1/h3/tasks', { key, body });
        // The answer of a caller's read of a corrupt task: never a source guessed from garbage.
        expect(answer.statusCode, answer.body).toBe(500);
        expect(answer.json()).toMatchObject({ error: { code: 'INTERNAL_ERROR' } });
        expect(answer.body).not.toContain(garbage);
      }
      expect({ ...(await countCreated(client)), balance: await client.balance(accountId) }).toEqual(
        before,
      );
    }
  });
});
