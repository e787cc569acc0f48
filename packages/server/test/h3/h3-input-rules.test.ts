import { randomUUID } from 'node:crypto';
import type { H3Quote, H3Task } from '@tollgate/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inputDigest } from '../../src/h3/h3-input.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';
import { startTaskGateway, workUntil } from '../helpers/tasks.js';
import { countCreated, h3Quote, settledH3, submitBody, type H3Input } from '../helpers/h3.js';
import { png } from '../helpers/media.js';

/**
 * Risk: a caller's mistake (or a made-up amount) creates a task, takes a hold or moves money.
 * Every rule of spec 4.4 is broken one at a time, on the quote and on the submit: each is
 * refused with the spec's error shape naming the field, and afterwards no task, hold or record
 * exists beyond those of the setup and the balance has not moved.
 */

const generate: H3Input = {
  action: 'generate',
  prompt: 'a fox in snow',
  parameters: { resolution: '480p', ratio: '16:9', duration: 4 },
};

describeEachDialect('H3 input rules on $name', (dialect) => {
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  let otherKey: string;
  let source: H3Task;
  let failedSource: string;
  let imageTask: string;
  let image: string;

  beforeAll(async () => {
    gateway = await startTaskGateway(dialect);
    ({ key, accountId } = await gateway.account(100_000_000));
    otherKey = (await gateway.account(100_000_000)).key;
    source = await settledH3(gateway, key, generate);
    const uploaded = await gateway.upload(key, png(64, 64), 'image/png');
    image = uploaded.json<{ data: { id: string } }>().data.id;
    // A failed H3 generate and a (settled) image task of the same key, as sources that are not allowed.
    const failed = await gateway.call('POST', '/v1/h3/tasks', {
      key,
      body: submitBody(
        { ...generate, prompt: 'no [sim:task=fail]' },
        await h3Quote(gateway, key, { ...generate, prompt: 'no [sim:task=fail]' }),
      ),
    });
    failedSource = failed.json<H3Task>().id;
    const imageCreated = await gateway.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: 'an owl', size: '256x256' },
    });
    imageTask = imageCreated.json<{ id: string }>().id;
    await workUntil(gateway, async () => {
      const states = await gateway.services.store.db
        .selectFrom('tasks')
        .select('status')
        .where('id', 'in', [failedSource, imageTask])
        .execute();
      return states.every((row) => row.status === 'succeeded' || row.status === 'failed');
    });
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  /** Sends `body` with `operation`; expects `status` and `code` naming `param`, and nothing created or moved. */
  async function refused(
    body: Record<string, unknown>,
    expected: { status: number; code: string; param?: string },
    as: string = key,
  ) {
    const before = { ...(await countCreated(gateway)), balance: await gateway.balance(accountId) };
    const response = await gateway.call('POST', '/v1/h3/tasks', { key: as, body });
    expect(response.statusCode, response.body).toBe(expected.status);
    expect(response.json()).toMatchObject({ error: { code: expected.code } });
    if (expected.param !== undefined)
      expect(response.json<{ error: { param?: string } }>().error.param).toBe(expected.param);
    expect({ ...(await countCreated(gateway)), balance: await gateway.balance(accountId) }).toEqual(
      before,
    );
    return response;
  }

  const both = (input: H3Input) =>
    (['quote', 'submit'] as const).map((operation) => ({
      model: 'sim-h3',
      ...input,
      operation,
      ...(operation === 'submit'
        ? {
            expected_input_digest: 'sha256:0',
            expected_price_version: 'sim-h3@1',
            expected_quote_amount: 1,
          }
        : {}),
    }));

  const cases: [string, () => H3Input, string][] = [
    [
      'regenerate with a prompt',
      () => ({ action: 'regenerate', source_task_id: source.id, prompt: 'x' }),
      'prompt',
    ],
    [
      'regenerate with reference assets',
      () => ({
        action: 'regenerate',
        source_task_id: source.id,
        referenceAssets: [{ asset_id: image, source: 'asset', role: 'reference_image' }],
      }),
      'referenceAssets',
    ],
    ['regenerate without a source task', () => ({ action: 'regenerate' }), 'source_task_id'],
    [
      'regenerate at 1080p',
      () => ({
        action: 'regenerate',
        source_task_id: source.id,
        parameters: { resolution: '1080p' },
      }),
      'parameters.resolution',
    ],
    [
      'regenerate without audio',
      () => ({
        action: 'regenerate',
        source_task_id: source.id,
        parameters: { generate_audio: false },
      }),
      'parameters.generate_audio',
    ],
    [
      'understand for 3 s',
      () => ({ action: 'understand', source_task_id: source.id, parameters: { duration: 3 } }),
      'parameters.duration',
    ],
    [
      'understand for 16 s',
      () => ({ action: 'understand', source_task_id: source.id, parameters: { duration: 16 } }),
      'parameters.duration',
    ],
    [
      'understand without a duration',
      () => ({ action: 'understand', source_task_id: source.id }),
      'parameters.duration',
    ],
    [
      'understand with a resolution',
      () => ({
        action: 'understand',
        source_task_id: source.id,
        parameters: { duration: 5, resolution: '720p' },
      }),
      'parameters.resolution',
    ],
    [
      'understand without a video',
      () => ({ action: 'understand', parameters: { duration: 5 } }),
      'referenceAssets',
    ],
    ['ratio 16x9', () => ({ ...generate, parameters: { ratio: '16x9' } }), 'parameters.ratio'],
    ['ratio 0:9', () => ({ ...generate, parameters: { ratio: '0:9' } }), 'parameters.ratio'],
    ['ratio -16:9', () => ({ ...generate, parameters: { ratio: '-16:9' } }), 'parameters.ratio'],
    ['generate without a prompt', () => ({ action: 'generate' }), 'prompt'],
    [
      'generate with a source task',
      () => ({ ...generate, source_task_id: source.id }),
      'source_task_id',
    ],
    [
      'a remote URL as a reference',
      () => ({
        ...generate,
        referenceAssets: [
          { asset_id: 'https://example.com/a.png', source: 'url', role: 'reference_image' },
        ],
      }),
      'referenceAssets.0.source',
    ],
    [
      'an unknown role',
      () => ({
        ...generate,
        referenceAssets: [{ asset_id: image, source: 'asset', role: 'poster' }],
      }),
      'referenceAssets.0.role',
    ],
    [
      'an image as reference_video',
      () => ({
        ...generate,
        referenceAssets: [{ asset_id: image, source: 'asset', role: 'reference_video' }],
      }),
      'referenceAssets.0.role',
    ],
    ['an unknown field', () => ({ ...generate, seed: 7 }), 'body.seed'],
    ['an unknown action', () => ({ ...generate, action: 'extend' }), 'body.action'],
    [
      'duration as text',
      () => ({ ...generate, parameters: { duration: '4' } }),
      'body.parameters.duration',
    ],
  ];

  it.each(cases)(
    '%s is refused with 400 naming the rule, on quote and on submit',
    async (_name, input, param) => {
      for (const body of both(input()))
        await refused(body, { status: 400, code: 'INVALID_INPUT', param });
    },
  );

  it("a source that is not the caller's own succeeded video task is refused (foreign ids are 404)", async () => {
    const regenerate = (id: string): H3Input => ({ action: 'regenerate', source_task_id: id });
    for (const body of both(regenerate(source.id)))
      await refused(
        body,
        { status: 404, code: 'TASK_NOT_FOUND', param: 'source_task_id' },
        otherKey,
      );
    for (const body of both(regenerate(randomUUID())))
      await refused(body, { status: 404, code: 'TASK_NOT_FOUND', param: 'source_task_id' });
    for (const body of both(regenerate(failedSource)))
      await refused(body, { status: 400, code: 'INVALID_INPUT', param: 'source_task_id' });
    for (const body of both(regenerate(imageTask)))
      await refused(body, { status: 400, code: 'INVALID_INPUT', param: 'source_task_id' });
    // Another account's asset is the 404 of a missing one, naming where it was given.
    const foreign = {
      ...generate,
      referenceAssets: [{ asset_id: image, source: 'asset', role: 'reference_image' }],
    };
    for (const body of both(foreign))
      await refused(
        body,
        { status: 404, code: 'NOT_FOUND', param: 'referenceAssets.0.asset_id' },
        otherKey,
      );
  });

  it('a quote requires an Idempotency-Key, like every business POST, and records nothing', async () => {
    const before = await countCreated(gateway);
    const response = await gateway.call('POST', '/v1/h3/tasks', {
      key,
      idempotencyKey: null,
      body: { model: 'sim-h3', ...generate, operation: 'quote' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      error: { code: 'INVALID_INPUT', param: 'Idempotency-Key' },
    });
    await h3Quote(gateway, key, generate);
    expect(await countCreated(gateway)).toEqual(before);
  });

  it('a quote refuses the echo, and a submit requires all three echoed values', async () => {
    await refused(
      { model: 'sim-h3', ...generate, operation: 'quote', expected_quote_amount: 5 },
      { status: 400, code: 'INVALID_INPUT', param: 'expected_quote_amount' },
    );
    const quote = await h3Quote(gateway, key, generate);
    for (const field of [
      'expected_input_digest',
      'expected_price_version',
      'expected_quote_amount',
    ]) {
      const body: Record<string, unknown> = submitBody(generate, quote);
      delete body[field];
      await refused(body, { status: 400, code: 'INVALID_INPUT', param: field });
    }
  });

  it('the digest ignores key order and white space; any value that matters changes it', async () => {
    const quote = await h3Quote(gateway, key, generate);
    const reordered = JSON.parse(
      `{"parameters":{"duration":4,"ratio":"16:9","resolution":"480p"},"prompt":"a fox in snow","action":"generate","model":"sim-h3"}`,
    ) as H3Input;
    const spaced = await gateway.app.inject({
      method: 'POST',
      url: '/v1/h3/tasks',
      headers: {
        authorization: `Bearer ${key}`,
        'idempotency-key': randomUUID(),
        'content-type': 'application/json',
      },
      payload: `{ "operation" : "quote",\n  ${JSON.stringify(reordered).slice(1)}`,
    });
    expect(spaced.statusCode, spaced.body).toBe(200);
    expect(spaced.json<H3Quote>().input_digest).toBe(quote.input_digest);
    const variants: H3Input[] = [
      { ...generate, prompt: 'a fox in snow.' },
      { ...generate, parameters: { resolution: '720p', ratio: '16:9', duration: 4 } },
      { ...generate, parameters: { resolution: '480p', ratio: '9:16', duration: 4 } },
      { ...generate, parameters: { resolution: '480p', ratio: '16:9', duration: 5 } },
      {
        ...generate,
        parameters: { resolution: '480p', ratio: '16:9', duration: 4, watermark: true },
      },
      {
        ...generate,
        referenceAssets: [{ asset_id: image, source: 'asset', role: 'reference_image' }],
      },
      { ...generate, referenceAssets: [{ asset_id: image, source: 'asset', role: 'first_frame' }] },
    ];
    const digests = new Set([quote.input_digest]);
    for (const variant of variants)
      digests.add((await h3Quote(gateway, key, variant)).input_digest);
    expect(digests.size).toBe(variants.length + 1);
    expect(
      inputDigest({ operation: 'quote', model: 'sim-h3', action: 'generate', prompt: 'x' }),
    ).toBe(inputDigest({ prompt: 'x', action: 'generate', model: 'sim-h3', operation: 'submit' }));
  });

  it('a submit whose input is not the quoted one, or whose amount is made up, creates nothing (409)', async () => {
    const quote = await h3Quote(gateway, key, generate);
    const changedInput = { ...submitBody(generate, quote), prompt: 'a wolf in snow' };
    await refused(changedInput, {
      status: 409,
      code: 'INPUT_DIGEST_MISMATCH',
      param: 'expected_input_digest',
    });
    const madeUp = {
      ...submitBody(generate, quote),
      expected_quote_amount: (quote.quoted_amount ?? 0) - 1,
    };
    await refused(madeUp, { status: 409, code: 'QUOTE_MISMATCH', param: 'expected_quote_amount' });
    // The amount of another mode: the same scene at 1080p, echoed on the 480p input.
    const dearer = await h3Quote(gateway, key, {
      ...generate,
      parameters: { resolution: '1080p', ratio: '16:9', duration: 4 },
    });
    const otherMode = {
      ...submitBody(generate, quote),
      expected_quote_amount: dearer.quoted_amount,
    };
    await refused(otherMode, {
      status: 409,
      code: 'QUOTE_MISMATCH',
      param: 'expected_quote_amount',
    });
    const otherVersion = { ...submitBody(generate, quote), expected_price_version: 'sim-h3@999' };
    await refused(otherVersion, {
      status: 409,
      code: 'PRICE_CHANGED',
      param: 'expected_price_version',
    });
  });

  it('a closed combination quotes its reasons with no amount, and its submit is refused (400 UNSUPPORTED_CAPABILITY)', async () => {
    const reasonsOf = async (input: H3Input) => {
      const quote = await h3Quote(gateway, key, input);
      expect(quote.quoted_amount).toBeNull();
      expect(quote.closed_reasons.length).toBeGreaterThan(0);
      const response = await refused(
        { ...submitBody(input, quote), expected_quote_amount: 1 },
        { status: 400, code: 'UNSUPPORTED_CAPABILITY' },
      );
      for (const reason of quote.closed_reasons)
        expect(response.json<{ error: { message: string } }>().error.message).toContain(reason);
      return quote.closed_reasons;
    };
    const audio = await gateway.upload(
      key,
      (await import('../helpers/media.js')).wav(2),
      'audio/wav',
    );
    const audioId = audio.json<{ data: { id: string } }>().data.id;
    // Certain audio references.
    expect(
      await reasonsOf({
        ...generate,
        referenceAssets: [{ asset_id: audioId, source: 'asset', role: 'reference_audio' }],
      }),
    ).toEqual([expect.stringContaining('audio references')]);
    // Re-editing a work: regenerating a regenerated video.
    const regenerated = await settledH3(gateway, key, {
      action: 'regenerate',
      source_task_id: source.id,
    });
    expect(await reasonsOf({ action: 'regenerate', source_task_id: regenerated.id })).toEqual([
      expect.stringContaining('re-editing a work'),
    ]);
    // Video understanding of a /v1/videos result.
    const video = await gateway.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video', prompt: 'rain', seconds: 1, size: '320x240' },
    });
    const videoId = video.json<{ id: string }>().id;
    let videoTask = video.json<{
      status: string;
      billing: { actual_amount: number; price_version: string };
    }>();
    await workUntil(gateway, async () => {
      videoTask = (await gateway.call('GET', `/v1/videos/${videoId}`, { key })).json();
      return videoTask.status === 'succeeded';
    });
    const settleVideo = await gateway.call('POST', `/v1/videos/${videoId}/settle`, {
      key,
      body: {
        actual_amount: videoTask.billing.actual_amount,
        price_version: videoTask.billing.price_version,
        confirmation: 'settle_original_approved',
      },
    });
    expect(settleVideo.statusCode, settleVideo.body).toBe(200);
    expect(
      await reasonsOf({
        action: 'understand',
        source_task_id: videoId,
        parameters: { duration: 4 },
      }),
    ).toEqual([expect.stringContaining('understanding a /v1/videos result')]);
    // The same video regenerated is open: a /v1/videos task is a valid source.
    const open = await h3Quote(gateway, key, { action: 'regenerate', source_task_id: videoId });
    expect(open.closed_reasons).toEqual([]);
  });

  it('six reference images: the first five are free, the sixth is priced', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 6; index += 1) {
      const uploaded = await gateway.upload(key, png(64 + index, 64), 'image/png');
      ids.push(uploaded.json<{ data: { id: string } }>().data.id);
    }
    const withImages = (count: number): H3Input => ({
      ...generate,
      referenceAssets: ids
        .slice(0, count)
        .map((id) => ({ asset_id: id, source: 'asset', role: 'reference_image' })),
    });
    const five = await h3Quote(gateway, key, withImages(5));
    const six = await h3Quote(gateway, key, withImages(6));
    const plain = await h3Quote(gateway, key, generate);
    expect(five.quoted_amount).toBe(plain.quoted_amount);
    expect(six.quoted_amount).toBe((plain.quoted_amount ?? 0) + 5_000);
    expect(six.line_items.find((item) => item.name === 'reference_image')).toMatchObject({
      quantity: 6,
      free_quantity: 5,
      unit_price: 5_000,
      amount: 5_000,
    });
  });
});
