import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/media.js';
import {
  expectChargedActualOnce,
  finishedTask,
  settleBodyOf,
  startTaskGateway,
  workUntil,
  type TaskBody,
} from '../helpers/tasks.js';

const BALANCE = 100_000_000;
/** The refusal names the field (`assetIds`, or the offending item, `assetIds.0`). */
const NAMES_ASSET_IDS = expect.stringMatching(/^assetIds(\.0)?$/) as string;

/**
 * A task records the assets it names in `assetIds` (issue 10, "Assets in use"): an asset cannot
 * be deleted from under a task that may still need it, and a task can only name the caller's own,
 * delivered assets — never another account's, never an output still waiting for settlement.
 */
describeEachDialect('assets used by a task on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  async function uploadPicture(client: TestGateway, key: string): Promise<string> {
    const uploaded = await client.upload(key, png(8, 8), 'image/png');
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    return uploaded.json<{ data: { id: string } }>().data.id;
  }

  const videoBody = (assetIds: string[]) => ({
    model: 'sim-video',
    prompt: 'the same fox, running',
    seconds: 1,
    size: '320x240',
    assetIds,
  });

  async function statusOf(client: TestGateway, key: string, taskId: string): Promise<string> {
    return (await client.call('GET', `/v1/videos/${taskId}`, { key })).json<TaskBody>().status;
  }

  it('an asset named by a queued or running task cannot be deleted (409 ASSET_IN_USE naming the task); once it finished, it can', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { accountId, key } = await client.account(BALANCE);
    const assetId = await uploadPicture(client, key);
    const created = await client.call('POST', '/v1/videos', { key, body: videoBody([assetId]) });
    expect(created.statusCode, created.body).toBe(202);
    const task = created.json<TaskBody>();
    const remove = () => client.call('DELETE', `/v1/assets/${assetId}`, { key });

    // Queued: the worker has not taken it yet (tests tick the worker by hand).
    expect(await statusOf(client, key, task.id)).toBe('queued');
    const whileQueued = await remove();
    expect(whileQueued.statusCode).toBe(409);
    expect(whileQueued.json()).toMatchObject({
      error: { code: 'ASSET_IN_USE', request_id: expect.any(String) as string },
    });
    expect(whileQueued.json<{ error: { message: string } }>().error.message).toContain(task.id);

    // Running: submitted, the upstream is working on it.
    await workUntil(client, async () => (await statusOf(client, key, task.id)) !== 'queued');
    expect(await statusOf(client, key, task.id)).toBe('running');
    const whileRunning = await remove();
    expect(whileRunning.statusCode).toBe(409);
    expect(whileRunning.json()).toMatchObject({ error: { code: 'ASSET_IN_USE' } });
    expect(whileRunning.json<{ error: { message: string } }>().error.message).toContain(task.id);

    // The asset is still there, listed and readable.
    const content = await client.call('GET', `/v1/assets/${assetId}/content`, { key });
    expect(content.statusCode).toBe(200);

    // Finished (succeeded, awaiting settlement): the task no longer needs it.
    const done = await finishedTask(client, key, `/v1/videos/${task.id}`);
    expect(done.status).toBe('succeeded');
    const deleted = await remove();
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toEqual({ object: 'asset', id: assetId, deleted: true });

    // Deleting the reference changes nothing about the task's money: it settles as priced.
    const settled = await client.call('POST', `/v1/videos/${task.id}/settle`, {
      key,
      body: settleBodyOf(done),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    await expectChargedActualOnce(client, accountId, BALANCE, done);
  }, 30_000);

  it('an asset of a failed task can be deleted once the task failed', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { accountId, key } = await client.account(BALANCE);
    const assetId = await uploadPicture(client, key);
    const created = await client.call('POST', '/v1/videos', {
      key,
      body: { ...videoBody([assetId]), prompt: 'storm [sim:task=fail]' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const taskId = created.json<TaskBody>().id;
    expect((await client.call('DELETE', `/v1/assets/${assetId}`, { key })).statusCode).toBe(409);
    const done = await finishedTask(client, key, `/v1/videos/${taskId}`);
    expect(done.status).toBe('failed');
    const deleted = await client.call('DELETE', `/v1/assets/${assetId}`, { key });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  }, 30_000);

  it("naming another account's asset is 404 naming assetIds (as for a missing id): no task, no hold, no record, and the owner may still delete it", async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const caller = await client.account(BALANCE);
    const owner = await client.account(BALANCE);
    const foreignId = await uploadPicture(client, owner.key);
    const idempotencyKey = randomUUID();
    const refused = await client.call('POST', '/v1/videos', {
      key: caller.key,
      idempotencyKey,
      body: videoBody([foreignId]),
    });
    expect(refused.statusCode, refused.body).toBe(404);
    expect(refused.json()).toMatchObject({
      error: {
        code: 'NOT_FOUND',
        param: NAMES_ASSET_IDS,
        request_id: expect.any(String) as string,
      },
    });
    expect(refused.json<{ error: { message: string } }>().error.message).toContain(foreignId);
    // Identical to naming an id that does not exist: nothing tells the caller the asset exists.
    const missing = await client.call('POST', '/v1/videos', {
      key: caller.key,
      body: videoBody(['asset_does_not_exist']),
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: { code: 'NOT_FOUND', param: NAMES_ASSET_IDS } });

    expect(await client.services.store.db.selectFrom('tasks').select('id').execute()).toEqual([]);
    expect(await client.services.store.db.selectFrom('asset_uses').selectAll().execute()).toEqual(
      [],
    );
    expect(await client.balance(caller.accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
    const record = await client.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
      key: caller.key,
    });
    expect(record.statusCode).toBe(404);
    // The refusal left nothing behind: the owner's asset is not "in use".
    const deleted = await client.call('DELETE', `/v1/assets/${foreignId}`, { key: owner.key });
    expect(deleted.statusCode, deleted.body).toBe(200);
  });

  it('naming an undelivered output of another task of the same account is 404; once that task is settled, the output may be used', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { accountId, key } = await client.account(BALANCE);
    const image = await client.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: 'a red fox', size: '256x256' },
    });
    expect(image.statusCode, image.body).toBe(202);
    const imageTask = await finishedTask(client, key, `/v1/images/${image.json<TaskBody>().id}`);
    expect(imageTask).toMatchObject({ status: 'succeeded', billing: { state: 'pending' } });
    // The caller does not see the output yet; its id is read from the store.
    expect(imageTask.outputs).toBeUndefined();
    const output = await client.services.store.db
      .selectFrom('assets')
      .select(['id', 'delivered_at'])
      .where('task_id', '=', imageTask.id)
      .executeTakeFirstOrThrow();
    expect(output.delivered_at).toBeNull();
    const heldBefore = await client.balance(accountId);
    expect(heldBefore.held).toBe(imageTask.billing.reserved_amount);

    const idempotencyKey = randomUUID();
    const refused = await client.call('POST', '/v1/videos', {
      key,
      idempotencyKey,
      body: videoBody([output.id]),
    });
    expect(refused.statusCode, refused.body).toBe(404);
    expect(refused.json()).toMatchObject({ error: { code: 'NOT_FOUND', param: NAMES_ASSET_IDS } });
    const tasks = await client.services.store.db.selectFrom('tasks').select('id').execute();
    expect(tasks).toEqual([{ id: imageTask.id }]);
    expect(await client.balance(accountId)).toEqual(heldBefore);
    expect(
      await client.services.store.db
        .selectFrom('asset_uses')
        .selectAll()
        .where('asset_id', '=', output.id)
        .execute(),
    ).toEqual([]);
    expect(
      (
        await client.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
          key,
        })
      ).statusCode,
    ).toBe(404);

    // Settled, the output is the caller's delivered asset: the same body (same key) now creates.
    const settled = await client.call('POST', `/v1/images/${imageTask.id}/settle`, {
      key,
      body: settleBodyOf(imageTask),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    const created = await client.call('POST', '/v1/videos', {
      key,
      idempotencyKey,
      body: videoBody([output.id]),
    });
    expect(created.statusCode, created.body).toBe(202);
    const video = await finishedTask(client, key, `/v1/videos/${created.json<TaskBody>().id}`);
    expect(video.status).toBe('succeeded');
    const videoSettled = await client.call('POST', `/v1/videos/${video.id}/settle`, {
      key,
      body: settleBodyOf(video),
    });
    expect(videoSettled.statusCode, videoSettled.body).toBe(200);
    const charged = (imageTask.billing.actual_amount ?? 0) + (video.billing.actual_amount ?? 0);
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE - charged,
      held: 0,
      available: BALANCE - charged,
    });
  }, 30_000);
});
