import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { settledH3 } from '../helpers/h3.js';
import { png } from '../helpers/media.js';
import { finishedTask, settleBodyOf, type TaskBody } from '../helpers/tasks.js';

/**
 * Risk: stored bytes read on the gateway's own origin turned into a page — a browser sniffing an
 * upload into HTML or running an SVG's script with the origin's cookies and storage. Every
 * content route (asset, video and H3 content, like the public `/s/` one) answers with `nosniff`
 * and a sandboxing CSP, whatever the answer (200, 206, 304, HEAD).
 */
const INERT = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
};

describeEachDialect('content routes serve inert content on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function expectInert(client: TestGateway, key: string, url: string): Promise<void> {
    const full = await client.call('GET', url, { key });
    expect(full.statusCode, `${url} ${full.body.slice(0, 200)}`).toBe(200);
    expect(full.headers, url).toMatchObject(INERT);
    const ranged = await client.call('GET', url, { key, headers: { range: 'bytes=0-3' } });
    expect(ranged.statusCode).toBe(206);
    expect(ranged.headers, url).toMatchObject(INERT);
    const head = await client.call('HEAD', url, { key });
    expect(head.headers, url).toMatchObject(INERT);
    const unchanged = await client.call('GET', url, {
      key,
      headers: { 'if-none-match': String(full.headers.etag) },
    });
    expect(unchanged.statusCode).toBe(304);
    expect(unchanged.headers, url).toMatchObject(INERT);
  }

  it('asset, video and H3 content answer with nosniff and a sandboxing CSP', async () => {
    const client = (gateway = await startGateway(dialect));
    const { key } = await client.account(100_000_000);
    const uploaded = await client.upload(key, png(16, 8), 'image/png');
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    await expectInert(
      client,
      key,
      `/v1/assets/${uploaded.json<{ data: { id: string } }>().data.id}/content`,
    );

    const created = await client.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video', prompt: 'a fox', seconds: 1, size: '320x240' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const path = `/v1/videos/${created.json<TaskBody>().id}`;
    const video = await finishedTask(client, key, path);
    const settled = await client.call('POST', `${path}/settle`, { key, body: settleBodyOf(video) });
    expect(settled.statusCode, settled.body).toBe(200);
    await expectInert(client, key, `${path}/content`);

    const h3 = await settledH3(client, key, {
      action: 'generate',
      prompt: 'a kite',
      parameters: { resolution: '720p', duration: 4 },
    });
    await expectInert(client, key, `/v1/h3/tasks/${h3.id}/content`);
  }, 90_000);
});
