import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { errorWithoutRequestId, startGateway, type TestGateway } from '../helpers/gateway.js';
import { mp4, png } from '../helpers/media.js';

describeEachDialect('asset reads on $name', (dialect) => {
  let gateway: TestGateway;
  let owner: { key: string; accountId: string };
  let video: Buffer;
  let assetId: string;
  let etag: string;
  beforeAll(async () => {
    gateway = await startGateway(dialect);
    owner = await gateway.account(0);
    video = Buffer.concat([
      mp4(8),
      Buffer.from(Array.from({ length: 1000 }, (_, index) => index % 251)),
    ]);
    const uploaded = await upload(owner.key, video, 'video/mp4');
    assetId = uploaded.json<{ data: { id: string } }>().data.id;
    etag = '';
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const upload = (key: string, body: Buffer, type: string) => gateway.upload(key, body, type);
  const get = (
    headers: Record<string, string> = {},
    key = owner.key,
    method: 'GET' | 'HEAD' = 'GET',
  ) =>
    gateway.app.inject({
      method,
      url: `/v1/assets/${assetId}/content`,
      headers: { authorization: `Bearer ${key}`, ...headers },
    });

  it('serves the original bytes with their headers', async () => {
    const response = await get();
    expect(response.statusCode).toBe(200);
    expect(response.rawPayload.equals(video)).toBe(true);
    expect(response.headers).toMatchObject({
      'content-type': 'video/mp4',
      'content-length': String(video.length),
      'accept-ranges': 'bytes',
    });
    expect(response.headers['last-modified']).toBeDefined();
    etag = String(response.headers['etag']);
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    const head = await get({}, owner.key, 'HEAD');
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-length']).toBe(String(video.length));
    expect(head.rawPayload.length).toBe(0);
  });

  it.each([
    ['the first byte', 'bytes=0-0', 0, 0],
    ['a middle range', 'bytes=100-199', 100, 199],
    ['the last byte', 'LAST', -1, -1],
    ['an open range', 'bytes=500-', 500, -1],
    ['a suffix range', 'bytes=-300', -300, -1],
    ['a range running past the end', 'bytes=1000-999999', 1000, -1],
  ])('answers %s with 206 and Content-Range', async (_name, header, from, to) => {
    const size = video.length;
    const start = from < 0 ? size + from : from;
    const end = to < 0 ? size - 1 : to;
    const range = header === 'LAST' ? `bytes=${size - 1}-${size - 1}` : header;
    const response = await get({ range });
    expect(response.statusCode).toBe(206);
    expect(response.headers['content-range']).toBe(`bytes ${start}-${end}/${size}`);
    expect(response.rawPayload.equals(video.subarray(start, end + 1))).toBe(true);
  });

  it('answers a range past the end with 416 and bytes */size', async () => {
    const response = await get({ range: `bytes=${video.length}-` });
    expect(response.statusCode).toBe(416);
    expect(response.headers['content-range']).toBe(`bytes */${video.length}`);
  });

  it('ignores an inverted range and answers several ranges with the whole content', async () => {
    for (const range of ['bytes=200-100', 'bytes=0-9,20-29']) {
      const response = await get({ range });
      expect(response.statusCode, range).toBe(200);
      expect(response.rawPayload.length).toBe(video.length);
    }
  });

  it('honours If-None-Match (304) and If-Range (a stale ETag gets the whole content)', async () => {
    expect((await get({ 'if-none-match': etag })).statusCode).toBe(304);
    const fresh = await get({ range: 'bytes=0-9', 'if-range': etag });
    expect(fresh.statusCode).toBe(206);
    const stale = await get({ range: 'bytes=0-9', 'if-range': '"0000"' });
    expect(stale.statusCode).toBe(200);
    expect(stale.rawPayload.length).toBe(video.length);
  });

  it('lists the account’s own assets, newest first, with a cursor', async () => {
    const second = (await upload(owner.key, png(3, 3), 'image/png')).json<{
      data: { id: string };
    }>().data.id;
    const first = await gateway.call('GET', '/v1/assets?limit=1', { key: owner.key });
    expect(first.json()).toMatchObject({
      object: 'list',
      data: [{ id: second }],
      has_more: true,
      next_cursor: second,
    });
    const next = await gateway.call('GET', `/v1/assets?limit=1&after=${second}`, {
      key: owner.key,
    });
    expect(next.json()).toMatchObject({ data: [{ id: assetId }], has_more: false });
  });

  it('hides assets from other accounts (404 as for a missing id), refuses service keys (403)', async () => {
    const stranger = await gateway.account(0);
    const hidden = await get({}, stranger.key);
    const missing = await gateway.app.inject({
      method: 'GET',
      url: '/v1/assets/asset_missing/content',
      headers: { authorization: `Bearer ${stranger.key}` },
    });
    expect(hidden.statusCode).toBe(404);
    expect(errorWithoutRequestId(hidden)).toEqual(errorWithoutRequestId(missing));
    expect((await gateway.call('GET', '/v1/assets', { key: stranger.key })).json()).toMatchObject({
      data: [],
    });
    const service = await gateway.newKey(owner.accountId, { kind: 'service' });
    const refused = await get({}, service.key);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: { code: 'PERMISSION_DENIED' } });
    expect((await gateway.call('GET', '/v1/assets', { key: service.key })).statusCode).toBe(403);
    const sameAccount = await gateway.newKey(owner.accountId);
    expect((await get({}, sameAccount.key)).statusCode).toBe(200);
  });

  it('refuses a disabled key and a key in the URL', async () => {
    const temporary = await gateway.newKey(owner.accountId);
    await gateway.admin('POST', `/admin/v1/keys/${temporary.keyId}/disable`);
    expect((await get({}, temporary.key)).statusCode).toBe(401);
    const inUrl = await gateway.app.inject({
      method: 'GET',
      url: `/v1/assets/${assetId}/content?api_key=${owner.key}`,
    });
    expect(inUrl.statusCode).toBe(401);
  });
});
