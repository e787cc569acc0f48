import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gif, png, wav } from '../helpers/media.js';

const [sqlite] = dialects;

describe('assets as chat inputs', () => {
  let gateway: TestGateway;
  let owner: { key: string; accountId: string };
  let pngId: string;
  let gifId: string;
  let wavId: string;
  const image = png(10, 8);
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    gateway = await startGateway(sqlite);
    owner = await gateway.account(1_000_000_000);
    pngId = await upload(owner.key, image, 'image/png');
    gifId = await upload(owner.key, gif(2, 2), 'image/gif');
    wavId = await upload(owner.key, wav(1), 'audio/wav');
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  async function upload(key: string, body: Buffer, type: string): Promise<string> {
    const response = await gateway.upload(key, body, type);
    return response.json<{ data: { id: string } }>().data.id;
  }
  const chat = (body: Record<string, unknown>, key = owner.key) =>
    gateway.call('POST', '/v1/chat/completions', { key, body });

  it('sends an asset named in assetIds to the model as the image it is', async () => {
    const response = await chat({
      model: 'sim-vision',
      messages: [{ role: 'user', content: 'describe' }],
      assetIds: [pngId],
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(
      response.json<{ choices: { message: { content: string } }[] }>().choices[0]?.message.content,
    ).toContain(`image/png ${image.length} bytes`);
  });

  it('resolves asset content parts, and OCR reads an asset as its data URI', async () => {
    const vision = await chat({
      model: 'sim-vision',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what' },
            { type: 'asset', asset_id: pngId },
          ],
        },
      ],
    });
    expect(vision.statusCode).toBe(200);
    const ocr = await chat({
      model: 'sim-ocr',
      messages: [{ role: 'user', content: [{ type: 'asset', asset_id: pngId }] }],
    });
    expect(ocr.statusCode).toBe(200);
    expect(
      ocr.json<{ choices: { message: { content: string } }[] }>().choices[0]?.message.content,
    ).toContain('10x8');
  });

  it('answers another account’s asset id with the 404 of a missing asset', async () => {
    const stranger = await gateway.account(1_000_000);
    const response = await chat(
      { model: 'sim-vision', messages: [{ role: 'user', content: 'x' }], assetIds: [pngId] },
      stranger.key,
    );
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ error: { code: 'NOT_FOUND', param: 'assetIds.0' } });
    const missing = await chat(
      { model: 'sim-vision', messages: [{ role: 'user', content: 'x' }], assetIds: ['asset_nope'] },
      stranger.key,
    );
    expect(missing.json<{ error: { message: string } }>().error.message).toBe(
      response.json<{ error: { message: string } }>().error.message.replace(pngId, 'asset_nope'),
    );
  });

  it('checks assets against the model: OCR refuses a GIF, chat refuses audio', async () => {
    const ocr = await chat({
      model: 'sim-ocr',
      messages: [{ role: 'user', content: [{ type: 'asset', asset_id: gifId }] }],
    });
    expect(ocr.statusCode).toBe(400);
    expect(ocr.json<{ error: { message: string } }>().error.message).toContain('PNG or JPEG only');
    const audio = await chat({
      model: 'sim-vision',
      messages: [{ role: 'user', content: 'x' }],
      assetIds: [wavId],
    });
    expect(audio.statusCode).toBe(400);
    expect(audio.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'assetIds.0' } });
  });
});
