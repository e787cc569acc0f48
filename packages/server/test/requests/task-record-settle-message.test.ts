import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { finishedTask, type TaskBody } from '../helpers/tasks.js';

/**
 * Risk: a caller settling a task's creation record at `POST /v1/requests/{id}/settle` is refused
 * without being told where the task is settled, and goes looking (or retries the wrong URL). The
 * refusal names the task's own settle URL; nothing is charged.
 */
describeEachDialect('settling a task through its creation record on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  it('is 409 SETTLEMENT_NOT_ALLOWED naming the task settle URL, nothing charged', async () => {
    const client = (gateway = await startGateway(dialect));
    const { key, accountId } = await client.account(100_000_000);
    const created = await client.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video', prompt: 'a fox', seconds: 1, size: '320x240' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const task = created.json<TaskBody>();
    const done = await finishedTask(client, key, `/v1/videos/${task.id}`);
    expect(done.billing.settlement_pending).toBe(true);
    const before = await client.balance(accountId);
    const refused = await client.call('POST', `/v1/requests/${task.request_id}/settle`, { key });
    expect(refused.statusCode, refused.body).toBe(409);
    const error = refused.json<{ error: { code: string; message: string } }>().error;
    expect(error.code).toBe('SETTLEMENT_NOT_ALLOWED');
    expect(error.message).toContain(`/v1/videos/${task.id}/settle`);
    expect(await client.balance(accountId)).toEqual(before);
  });
});
