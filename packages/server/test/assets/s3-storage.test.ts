import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { RECLAIM_GRACE_MS, reclaimUnusedObjects } from '../../src/assets/asset-objects.js';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { mp4, png } from '../helpers/media.js';

const [sqlite] = dialects;
const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/**
 * The shared backend against a real S3-compatible server (s3rver) started on loopback by the
 * test: uploads land in the bucket only when accepted, Range reads come back from it.
 */
describe('assets on S3-compatible storage', () => {
  let server: S3rver;
  let directory: string;
  let client: S3Client;
  let gateway: TestGateway;
  let key: string;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    directory = mkdtempSync(path.join(tmpdir(), 's3rver-'));
    server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
    const { port } = await server.run();
    const endpoint = `http://127.0.0.1:${port}`;
    client = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    await client.send(new CreateBucketCommand({ Bucket: 'tollgate-assets' }));
    const config = testConfig({
      models: defaultConfig.models,
      storage: {
        kind: 's3',
        endpoint,
        bucket: 'tollgate-assets',
        prefix: 'test/',
        force_path_style: true,
        access_key_id_env: 'S3_KEY',
        secret_access_key_env: 'S3_SECRET',
      },
    });
    gateway = await startGateway(sqlite, { config, services: { storageSecrets: credentials } });
    ({ key } = await gateway.account(1_000_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
    client.destroy();
    await server.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const objects = async () =>
    (await client.send(new ListObjectsV2Command({ Bucket: 'tollgate-assets' }))).Contents?.map(
      (object) => object.Key,
    ) ?? [];

  it('puts an accepted upload in the bucket at its content address and serves Range reads from it', async () => {
    const video = Buffer.concat([mp4(5), Buffer.alloc(5_000, 9)]);
    const uploaded = await gateway.upload(key, video, 'video/mp4');
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    const asset = uploaded.json<{
      data: { id: string; sha256: string; duration_seconds: number };
    }>().data;
    expect(asset.duration_seconds).toBe(5);
    expect(await objects()).toContain(`test/objects/${asset.sha256.slice(0, 2)}/${asset.sha256}`);
    const whole = await gateway.app.inject({
      method: 'GET',
      url: `/v1/assets/${asset.id}/content`,
      headers: { authorization: `Bearer ${key}` },
    });
    expect(whole.rawPayload.equals(video)).toBe(true);
    const part = await gateway.app.inject({
      method: 'GET',
      url: `/v1/assets/${asset.id}/content`,
      headers: { authorization: `Bearer ${key}`, range: 'bytes=100-199' },
    });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100-199/${video.length}`);
    expect(part.rawPayload.equals(video.subarray(100, 200))).toBe(true);
  });

  it('never lets a refused upload reach the bucket, and leaves no staged file', async () => {
    const before = await objects();
    const refused = await gateway.upload(
      key,
      Buffer.from('plain text pretending to be a picture'),
      'image/png',
    );
    expect(refused.statusCode).toBe(415);
    expect(await objects()).toEqual(before);
    const staging = (gateway.services.assets as unknown as { staging: { tempDir: string } }).staging
      .tempDir;
    expect(readdirSync(staging)).toEqual([]);
  });

  it('deletes an unused object from the bucket when the sweeper reclaims it', async () => {
    const image = png(13, 7);
    const asset = (await gateway.upload(key, image, 'image/png')).json<{
      data: { id: string; sha256: string };
    }>().data;
    const objectKey = `test/objects/${asset.sha256.slice(0, 2)}/${asset.sha256}`;
    expect(await objects()).toContain(objectKey);
    const deleted = await gateway.call('DELETE', `/v1/assets/${asset.id}`, { key });
    expect(deleted.statusCode).toBe(200);
    const report = await reclaimUnusedObjects(gateway.services.store.db, gateway.services.assets, {
      now: Date.now() + RECLAIM_GRACE_MS + 60_000,
    });
    expect(report.reclaimed).toBeGreaterThanOrEqual(1);
    expect(await objects()).not.toContain(objectKey);
  });

  it('reads an asset back from the bucket as a chat input', async () => {
    const image = png(12, 9);
    const id = (await gateway.upload(key, image, 'image/png')).json<{ data: { id: string } }>().data
      .id;
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: {
        model: 'sim-ocr',
        messages: [{ role: 'user', content: [{ type: 'asset', asset_id: id }] }],
      },
    });
    expect(response.statusCode).toBe(200);
    expect(
      response.json<{ choices: { message: { content: string } }[] }>().choices[0]?.message.content,
    ).toContain('12x9');
  });
});
