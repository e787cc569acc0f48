import { afterEach, expect, it, vi } from 'vitest';
import { OpenAiVideos } from '../../src/providers/openai-compatible/videos.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';
import { png, wav } from '../helpers/media.js';
import { finishedTask, startTaskGateway, type TaskBody } from '../helpers/tasks.js';

describeEachDialect('reference images of a task on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it('are priced as quoted, and their bytes reach the upstream with the submission', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { key } = await client.account(100_000_000);
    const picture = png(8, 8);
    const uploaded = await client.upload(key, picture, 'image/png');
    const assetId = uploaded.json<{ data: { id: string } }>().data.id;
    const body = {
      model: 'sim-video',
      prompt: 'the same fox, running',
      seconds: 1,
      size: '320x240',
      assetIds: [assetId],
    };
    const quote = (await client.call('POST', '/v1/videos/quote', { key, body })).json<{
      line_items: { name: string; quantity: number }[];
    }>();
    expect(quote.line_items).toContainEqual(
      expect.objectContaining({ name: 'reference_image', quantity: 1 }),
    );
    const submissions = vi.spyOn(OpenAiVideos.prototype, 'submit');
    const created = await client.call('POST', '/v1/videos', { key, body });
    expect(created.statusCode, created.body).toBe(202);
    const task = await finishedTask(client, key, `/v1/videos/${created.json<TaskBody>().id}`);
    expect(task.status).toBe('succeeded');
    const sent = submissions.mock.calls[0]?.[0];
    expect(sent?.references).toHaveLength(1);
    expect(sent?.references[0]?.mediaType).toBe('image/png');
    expect(sent?.references[0]?.bytes.equals(picture)).toBe(true);
    // Settle so the ledger is clean and the hold resolved.
    const settled = await client.call('POST', `/v1/videos/${task.id}/settle`, {
      key,
      body: {
        actual_amount: task.billing.actual_amount,
        price_version: task.billing.price_version,
        confirmation: 'settle_original_approved',
      },
    });
    expect(settled.statusCode).toBe(200);
  });

  it('must be images of the caller: audio is 400, a service key 403, nothing created or held', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { accountId, key } = await client.account(100_000_000);
    const audio = await client.upload(key, wav(1), 'audio/wav');
    const audioId = audio.json<{ data: { id: string } }>().data.id;
    const refused = await client.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video', prompt: 'x', seconds: 1, size: '320x240', assetIds: [audioId] },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'assetIds.0' } });
    const service = await client.newKey(accountId, { kind: 'service' });
    const forbidden = await client.call('POST', '/v1/videos/quote', {
      key: service.key,
      body: { model: 'sim-video', prompt: 'x', seconds: 1, size: '320x240', assetIds: [audioId] },
    });
    expect(forbidden.statusCode).toBe(403);
    expect(await client.balance(accountId)).toMatchObject({ held: 0 });
    expect(await client.services.store.db.selectFrom('tasks').select('id').execute()).toEqual([]);
  });
});
