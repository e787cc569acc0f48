import type { H3Task } from '@tollgate/protocol';
import { afterEach, expect, it } from 'vitest';
import { mp4Info } from '../../src/assets/mp4-duration.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { testConfig, type TestGateway } from '../helpers/gateway.js';
import { startTaskGateway } from '../helpers/tasks.js';
import { finishedH3, h3Quote, h3QuoteAndSubmit, h3SettleBody, settledH3 } from '../helpers/h3.js';
import { mp4, wav } from '../helpers/media.js';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Risk: the H3 half of the mission bills money for video the caller never gets, or gives it
 * away unbilled. Every action goes the whole way here — quote, submit (the quote held), the
 * worker, settlement with the H3 word, delivery to the creating key only — and the balance
 * moves by exactly the settled amounts.
 */

async function secondsOf(bytes: Buffer): Promise<number> {
  const directory = await mkdtemp(path.join(tmpdir(), 'h3-video-'));
  try {
    const file = path.join(directory, 'video.mp4');
    await writeFile(file, bytes);
    return (await mp4Info(file)).durationSeconds ?? 0;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

describeEachDialect('H3 tasks end to end on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  it('generate: the quote is held, the delivered seconds are billed, the video reaches the creating key only after settlement', async () => {
    gateway = await startTaskGateway(dialect);
    const { accountId, key } = await gateway.account(10_000_000);
    const other = await gateway.newKey(accountId);
    const input = {
      action: 'generate',
      prompt: 'a lighthouse at dusk [sim:deliver_seconds=3]',
      parameters: { resolution: '720p', ratio: '16:9', duration: 4, watermark: false },
    };
    const { quote, response } = await h3QuoteAndSubmit(gateway, key, input);
    // 4 s at 720p without audio (40,000 per second).
    expect(quote).toMatchObject({ quoted_amount: 160_000, closed_reasons: [] });
    expect(response.statusCode, response.body).toBe(202);
    const accepted = response.json<H3Task>();
    expect(accepted).toMatchObject({ object: 'h3.task', action: 'generate', status: 'queued' });
    expect(accepted.id).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(await gateway.balance(accountId)).toMatchObject({ held: 160_000 });

    const task = await finishedH3(gateway, key, accepted.id);
    expect(task.status).toBe('succeeded');
    expect(task.billing).toMatchObject({
      settlement_pending: true,
      actual_amount: 120_000,
      state: 'pending',
    });
    expect(task.billing.line_items?.[0]).toMatchObject({
      name: 'video_second',
      quantity: 3,
      measured: { input_audio_seconds: 0, input_video_seconds: 0, output_seconds: 3 },
    });
    // Settlement is possible for the default window (7 days) from when it was priced.
    expect(task.settlement).toEqual({
      url: `/v1/h3/tasks/${task.id}/settle`,
      method: 'POST',
      expires_at: new Date(Date.parse(task.finished_at ?? '') + 7 * 86_400_000).toISOString(),
    });
    expect(task.asset_id).toBeUndefined();
    const early = await gateway.call('GET', `/v1/h3/tasks/${task.id}/content`, { key });
    expect(early.statusCode).toBe(409);

    // Another key of the same account sees nothing: read, settle and content are the 404 of a missing id.
    for (const [method, url] of [
      ['GET', `/v1/h3/tasks/${task.id}`],
      ['GET', `/v1/h3/tasks/${task.id}?refresh=true`],
      ['GET', `/v1/h3/tasks/${task.id}/content`],
    ] as const) {
      const foreign = await gateway.call(method, url, { key: other.key });
      expect(foreign.statusCode, url).toBe(404);
      expect(foreign.json()).toMatchObject({ error: { code: 'TASK_NOT_FOUND' } });
    }
    const foreignSettle = await gateway.call('POST', `/v1/h3/tasks/${task.id}/settle`, {
      key: other.key,
      body: h3SettleBody(task),
    });
    expect(foreignSettle.statusCode).toBe(404);

    const settled = await gateway.call('POST', `/v1/h3/tasks/${task.id}/settle`, {
      key,
      body: h3SettleBody(task),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    const delivered = settled.json<H3Task>();
    expect(delivered).toMatchObject({
      status: 'succeeded',
      billing: { settlement_pending: false, state: 'settled', settled_amount: 120_000 },
      content_path: `/v1/h3/tasks/${task.id}/content`,
      seconds: 3,
    });
    expect(delivered.settlement).toBeUndefined();
    expect(await gateway.balance(accountId)).toEqual({
      balance: 9_880_000,
      held: 0,
      available: 9_880_000,
    });
    const content = await gateway.call('GET', delivered.content_path ?? '', { key });
    expect(content.statusCode).toBe(200);
    expect(content.headers['content-type']).toBe('video/mp4');
    expect(await secondsOf(content.rawPayload)).toBeCloseTo(3, 1);
    const ranged = await gateway.call('GET', delivered.content_path ?? '', {
      key,
      headers: { range: 'bytes=0-99' },
    });
    expect(ranged.statusCode).toBe(206);
    expect(ranged.rawPayload.length).toBe(100);
  });

  it('regenerate a result, then understand it: input video seconds are billed, the text is delivered after settlement', async () => {
    gateway = await startTaskGateway(dialect);
    const { accountId, key } = await gateway.account(10_000_000);
    const original = await settledH3(gateway, key, {
      action: 'generate',
      prompt: 'waves on a pier',
      parameters: { resolution: '480p', duration: 4 },
    });
    expect(original.billing.settled_amount).toBe(80_000);

    const regenerate = {
      action: 'regenerate',
      source_task_id: original.id,
      parameters: { resolution: '2K', generate_audio: true, duration: 4 },
    };
    const quote = await h3Quote(gateway, key, regenerate);
    // 4 s of input video + 4 s of output at 2K with audio (160,000 per second).
    expect(quote.quoted_amount).toBe(8 * 160_000);
    expect(quote.line_items[0]?.measured).toEqual({
      input_audio_seconds: 0,
      input_video_seconds: 4,
      output_seconds: 4,
    });
    const regenerated = await settledH3(gateway, key, regenerate);
    expect(regenerated).toMatchObject({ action: 'regenerate', source_task_id: original.id });
    expect(regenerated.billing.settled_amount).toBe(8 * 160_000);
    const [first, second] = await Promise.all(
      [original, regenerated].map(async (task) =>
        (await gateway?.call('GET', task.content_path ?? '', { key }))?.rawPayload.toString('hex'),
      ),
    );
    expect(second).not.toBe(first);

    const understand = {
      action: 'understand',
      prompt: 'what happens?',
      source_task_id: regenerated.id,
      parameters: { duration: 4 },
    };
    const understood = await settledH3(gateway, key, understand);
    expect(understood.text).toEqual(expect.any(String));
    expect(understood.text?.length).toBeGreaterThan(0);
    expect(understood.billing.line_items?.map((item) => item.name)).toEqual([
      'input_token',
      'output_token',
    ]);
    const spent =
      original.billing.settled_amount +
      regenerated.billing.settled_amount +
      understood.billing.settled_amount;
    expect(await gateway.balance(accountId)).toEqual({
      balance: 10_000_000 - spent,
      held: 0,
      available: 10_000_000 - spent,
    });
  });

  it("input audio and video are billed on their own files' seconds, with the output, rounded up once", async () => {
    // The default configuration closes audio references for generate; this one opens them.
    const config = testConfig();
    gateway = await startTaskGateway(dialect, {
      config: {
        ...config,
        models: config.models.map((model) =>
          model.id === 'sim-h3' ? { ...model, h3_closed: [] } : model,
        ),
      },
    });
    const { accountId, key } = await gateway.account(10_000_000);
    const audio = await gateway.upload(key, wav(2.5), 'audio/wav');
    const video = await gateway.upload(key, mp4(6), 'video/mp4');
    const [audioId, videoId] = [audio, video].map(
      (response) => response.json<{ data: { id: string } }>().data.id,
    );
    const input = {
      action: 'generate',
      prompt: 'a song over the sea [sim:deliver_seconds=4]',
      parameters: { resolution: '480p', duration: 4, generate_audio: true },
      referenceAssets: [
        { asset_id: audioId, source: 'asset', role: 'reference_audio' },
        { asset_id: videoId, source: 'asset', role: 'reference_video' },
      ],
    };
    const quote = await h3Quote(gateway, key, input);
    // ceil(2.5 + 6 + 4) = 13 s at 480p with audio (30,000 per second).
    expect(quote.line_items[0]).toMatchObject({
      name: 'video_second',
      quantity: 13,
      unit_price: 30_000,
      measured: { input_audio_seconds: 2.5, input_video_seconds: 6, output_seconds: 4 },
    });
    expect(quote.quoted_amount).toBe(390_000);
    const settled = await settledH3(gateway, key, input);
    expect(settled.billing.settled_amount).toBe(390_000);
    expect(await gateway.balance(accountId)).toMatchObject({
      balance: 10_000_000 - 390_000,
      held: 0,
    });
  });

  it('understand of an uploaded video accepts duration 4 and 15', async () => {
    gateway = await startTaskGateway(dialect);
    const { key } = await gateway.account(10_000_000);
    const uploaded = await gateway.upload(key, mp4(6), 'video/mp4');
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    const assetId = uploaded.json<{ data: { id: string } }>().data.id;
    for (const duration of [4, 15]) {
      const { response } = await h3QuoteAndSubmit(gateway, key, {
        action: 'understand',
        referenceAssets: [{ asset_id: assetId, source: 'asset', role: 'reference_video' }],
        parameters: { duration },
      });
      expect(response.statusCode, response.body).toBe(202);
      const task = await finishedH3(gateway, key, response.json<H3Task>().id);
      expect(task.status).toBe('succeeded');
      const settled = await gateway.call('POST', `/v1/h3/tasks/${task.id}/settle`, {
        key,
        body: h3SettleBody(task),
      });
      expect(settled.statusCode).toBe(200);
    }
  });
});
