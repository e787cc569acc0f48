import { afterEach, expect, it, vi } from 'vitest';
import { OpenAiVideos } from '../../src/providers/openai-compatible/videos.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/media.js';
import { finishedTask, startTaskGateway, type TaskBody } from '../helpers/tasks.js';

const BALANCE = 100_000_000;

/**
 * Issue 18, Found 5 / Deliver 3: what the upstream is sent is built before the task is marked
 * `sending`, so a task whose input cannot be read (a reference asset's bytes) certainly never
 * left: it fails with its hold released, instead of waiting as `submission_unknown`.
 */
describeEachDialect('a task whose input cannot be read on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it('is failed and released, never submitted, when a reference asset cannot be read before sending', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { accountId, key } = await client.account(BALANCE);
    const uploaded = await client.upload(key, png(8, 8), 'image/png');
    const assetId = uploaded.json<{ data: { id: string } }>().data.id;
    const submissions = vi.spyOn(OpenAiVideos.prototype, 'submit');
    // The storage fails from now on (a disk or bucket that went away).
    vi.spyOn(client.services.assets, 'readAll').mockRejectedValue(new Error('storage gone'));
    const created = await client.call('POST', '/v1/videos', {
      key,
      body: {
        model: 'sim-video',
        prompt: 'a fox',
        seconds: 1,
        size: '320x240',
        assetIds: [assetId],
      },
    });
    expect(created.statusCode, created.body).toBe(202);
    const id = created.json<TaskBody>().id;
    const task = await finishedTask(client, key, `/v1/videos/${id}`);
    expect(task).toMatchObject({
      status: 'failed',
      error: { code: 'INPUT_UNAVAILABLE' },
      billing: { state: 'released', settlement_pending: false, settled_amount: 0 },
    });
    expect(task.settlement).toBeUndefined();
    expect(submissions).not.toHaveBeenCalled();
    const row = await client.services.taskStore.byId(id);
    expect(row?.submission).toBe('pending');
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  });
});
