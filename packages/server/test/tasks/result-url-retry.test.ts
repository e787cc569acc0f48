import { Readable } from 'node:stream';
import { afterEach, expect, it, vi } from 'vitest';
import type { GuardedFetchDeps } from '../../src/net/guarded-fetch.js';
import type { H3Task } from '@tollgate/protocol';
import { ArkH3Tasks } from '../../src/providers/ark/h3-tasks.js';
import { OpenAiImages } from '../../src/providers/openai-compatible/images.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';
import { h3QuoteAndSubmit } from '../helpers/h3.js';
import { mp4, png } from '../helpers/media.js';
import {
  expectChargedActualOnce,
  settleBodyOf,
  startTaskGateway,
  workUntil,
  type TaskBody,
} from '../helpers/tasks.js';

const BALANCE = 100_000_000;
const RESULT_URL = 'https://cdn.example/result-1.png';

/**
 * A CDN on another origin (through the guarded fetch's injected network): answers 503 to the
 * first `failures` fetches of the result URL, then the picture.
 */
function flakyCdn(
  failures: number,
  file: { readonly bytes: Buffer; readonly contentType: string } = {
    bytes: png(256, 256),
    contentType: 'image/png',
  },
): GuardedFetchDeps & { fetched: string[] } {
  const fetched: string[] = [];
  return {
    fetched,
    resolve: (host) => Promise.resolve(host === 'cdn.example' ? ['93.184.216.34'] : []),
    get: (url) => {
      fetched.push(url.href);
      const failing = fetched.length <= failures;
      return Promise.resolve({
        status: failing ? 503 : 200,
        location: undefined,
        contentType: failing ? 'text/plain' : file.contentType,
        contentLength: undefined,
        body: Readable.from(failing ? [Buffer.from('busy')] : [file.bytes]),
      });
    },
  };
}

/**
 * Issue 18, Found 11 (a foreign result URL that failed once was neither kept nor retried): an
 * image upstream answers synchronously with a URL on another origin; when that download fails
 * the URL is kept on the task and the download retried from it, bounded, without asking the
 * upstream again (it cannot be: the answer was the result itself). A running (H3) task's kept
 * URL is retried the same way, its upstream not polled again.
 */
describeEachDialect('a foreign result URL whose download fails on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  /** The real submission, its answer's image given as a URL on another origin. */
  function upstreamAnsweringForeignUrl() {
    const original = Object.getOwnPropertyDescriptor(OpenAiImages.prototype, 'submit')
      ?.value as OpenAiImages['submit'];
    return vi.spyOn(OpenAiImages.prototype, 'submit').mockImplementation(async function (
      this: OpenAiImages,
      ...args: Parameters<OpenAiImages['submit']>
    ) {
      const result = await original.apply(this, args);
      if (result.kind !== 'completed') return result;
      return { ...result, outputs: [this.resultSource(RESULT_URL)] };
    });
  }

  async function createImage(client: TestGateway, key: string): Promise<string> {
    const created = await client.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: 'a harbour at dawn', size: '256x256' },
    });
    expect(created.statusCode, created.body).toBe(202);
    return created.json<TaskBody>().id;
  }

  /**
   * Works the task until it leaves queued/running; each retry after its back-off, which
   * `workUntil` skips (the gateway's clock moves to it).
   */
  async function workToEnd(client: TestGateway, id: string): Promise<void> {
    await workUntil(
      client,
      async () => {
        const row = await client.services.taskStore.byId(id);
        return row?.status !== 'queued' && row?.status !== 'running';
      },
      30_000,
    );
  }

  it('a result URL that fails on the first fetch is kept and fetched again: delivered, submitted once', async () => {
    const cdn = flakyCdn(1);
    gateway = await startTaskGateway(dialect, { services: { fetchDeps: cdn } });
    const client = gateway;
    const submissions = upstreamAnsweringForeignUrl();
    const { accountId, key } = await client.account(BALANCE);
    const id = await createImage(client, key);
    await workToEnd(client, id);
    const task = (await client.call('GET', `/v1/images/${id}`, { key })).json<TaskBody>();
    expect(task).toMatchObject({ status: 'succeeded', billing: { state: 'pending' } });
    expect(submissions).toHaveBeenCalledTimes(1);
    expect(cdn.fetched).toEqual([RESULT_URL, RESULT_URL]);
    // Delivered: the kept sources are gone, the count of failures stays as it was.
    const row = await client.services.taskStore.byId(id);
    expect(row).toMatchObject({ result_sources: null, download_failures: 1 });
    const settled = await client.call('POST', `/v1/images/${id}/settle`, {
      key,
      body: settleBodyOf(task),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    const delivered = settled.json<TaskBody>();
    expect(delivered.outputs).toHaveLength(1);
    expect(delivered.outputs?.[0]?.media_type).toBe('image/png');
    await expectChargedActualOnce(client, accountId, BALANCE, task);
  }, 60_000);

  it('a result URL that always fails ends in the operator queue after the bound, URL and hold kept', async () => {
    const cdn = flakyCdn(Number.POSITIVE_INFINITY);
    gateway = await startTaskGateway(dialect, { services: { fetchDeps: cdn } });
    const client = gateway;
    const submissions = upstreamAnsweringForeignUrl();
    const { accountId, key } = await client.account(BALANCE);
    const id = await createImage(client, key);
    await workToEnd(client, id);
    const operatorView = await client.admin('GET', `/admin/v1/tasks/${id}`);
    expect(operatorView).toMatchObject({
      status: 'submission_unknown',
      submission: 'accepted',
      due_at: null,
      billing: { state: 'reserved' },
    });
    expect(String(operatorView['note'])).toMatch(/could not be stored after 5 tries/);
    expect(submissions).toHaveBeenCalledTimes(1);
    expect(cdn.fetched).toEqual(Array.from({ length: 5 }, () => RESULT_URL));
    const row = await client.services.taskStore.byId(id);
    expect(JSON.parse(row?.result_sources ?? 'null')).toMatchObject({ urls: [RESULT_URL] });
    const quoted = (await client.call('GET', `/v1/images/${id}`, { key })).json<TaskBody>().quote
      .quoted_amount;
    expect((await client.balance(accountId)).held).toBe(quoted);
    // Nothing more happens on its own: no further fetch, no further submission.
    await client.services.taskWorker.tick();
    expect(cdn.fetched).toHaveLength(5);
    await client.admin('POST', `/admin/v1/tasks/${id}/resolve`, {
      action: 'release',
      reason: 'the result URL never answered',
    });
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  }, 60_000);

  it('an H3 video result URL that failed once is fetched again from the kept URL, the upstream not polled again', async () => {
    const videoUrl = 'https://cdn.example/video-1.mp4';
    const cdn = flakyCdn(1, { bytes: mp4(4), contentType: 'video/mp4' });
    gateway = await startTaskGateway(dialect, { services: { fetchDeps: cdn } });
    const client = gateway;
    const original = Object.getOwnPropertyDescriptor(ArkH3Tasks.prototype, 'poll')
      ?.value as ArkH3Tasks['poll'];
    let completedPolls = 0;
    vi.spyOn(ArkH3Tasks.prototype, 'poll').mockImplementation(async function (
      this: ArkH3Tasks,
      ...args: Parameters<ArkH3Tasks['poll']>
    ) {
      const result = await original.apply(this, args);
      if (result.kind !== 'completed') return result;
      completedPolls += 1;
      return { ...result, outputs: [this.resultSource(videoUrl)] };
    });
    const { key } = await client.account(BALANCE);
    const { response } = await h3QuoteAndSubmit(client, key, {
      action: 'generate',
      prompt: 'a lighthouse at dusk',
      parameters: { resolution: '720p', ratio: '16:9', duration: 4, watermark: false },
    });
    expect(response.statusCode, response.body).toBe(202);
    const id = response.json<H3Task>().id;
    await workToEnd(client, id);
    const row = await client.services.taskStore.byId(id);
    expect(row).toMatchObject({ status: 'succeeded', result_sources: null, download_failures: 1 });
    expect(completedPolls).toBe(1);
    expect(cdn.fetched).toEqual([videoUrl, videoUrl]);
  }, 60_000);
});
