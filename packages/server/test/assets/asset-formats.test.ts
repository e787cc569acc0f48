import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { gif, jpeg, mp3, mp4, png, wav, webp } from '../helpers/media.js';

const [sqlite] = dialects;

describe('asset upload: the format matrix', () => {
  let gateway: TestGateway;
  let key: string;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    gateway = await startGateway(sqlite);
    ({ key } = await gateway.account(0));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const upload = (body: Buffer, type: string, headers: Record<string, string> = {}) =>
    gateway.upload(key, body, type, headers);

  it.each([
    ['PNG', png(32, 16), 'image/png', { width: 32, height: 16, duration_seconds: null }],
    ['JPEG', jpeg(640, 480), 'image/jpeg', { width: 640, height: 480 }],
    ['WebP', webp(20, 10), 'image/webp', { width: 20, height: 10 }],
    ['GIF', gif(7, 5), 'image/gif', { width: 7, height: 5 }],
    ['WAV', wav(2), 'audio/wav', { duration_seconds: 2, width: null }],
    ['MP3', mp3(100), 'audio/mpeg', {}],
    ['MP4', mp4(6), 'video/mp4', { duration_seconds: 6 }],
  ])('accepts %s and reports its probed metadata', async (_name, bytes, type, expected) => {
    const response = await upload(bytes, type, { 'x-tollgate-file-name': 'sample.bin' });
    expect(response.statusCode, response.body).toBe(201);
    const data = response.json<{ data: Record<string, unknown> }>().data;
    expect(data).toMatchObject({
      id: expect.stringMatching(/^asset_/),
      media_type: type,
      bytes: bytes.length,
      file_name: 'sample.bin',
      ...expected,
    });
    if (type === 'audio/mpeg') expect(Number(data['duration_seconds'])).toBeCloseTo(2.6, 0);
  });

  it.each([
    [
      'text labelled as PNG',
      Buffer.from('just some text, not an image at all'),
      'image/png',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    ['a PNG labelled as JPEG', png(2, 2), 'image/jpeg', 400, 'INVALID_INPUT'],
    ['an empty body', Buffer.alloc(0), 'image/png', 400, 'INVALID_INPUT'],
    ['a truncated PNG', png(64, 64).subarray(0, 60), 'image/png', 400, 'INVALID_INPUT'],
    ['a truncated WAV', wav(1).subarray(0, 1000), 'audio/wav', 400, 'INVALID_INPUT'],
    [
      'a PDF',
      Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(100)]),
      'application/pdf',
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    ],
  ])(
    'refuses %s, leaving no file and no asset behind',
    async (_name, bytes, type, status, code) => {
      const before = await gateway.services.store.db.selectFrom('assets').select('id').execute();
      const response = await upload(bytes, type);
      expect(response.statusCode, response.body).toBe(status);
      expect(response.json()).toMatchObject({ error: { code } });
      expect(
        await gateway.services.store.db.selectFrom('assets').select('id').execute(),
      ).toHaveLength(before.length);
    },
  );

  it('keeps no temporary files after refusals', () => {
    const root = (gateway.services.assets as unknown as { tempDir: string }).tempDir;
    const left = readdirSync(root).map((name) => `${name} ${statSync(path.join(root, name)).size}`);
    expect(left).toEqual([]);
  });
});
