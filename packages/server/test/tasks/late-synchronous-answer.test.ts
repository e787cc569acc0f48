import { Readable } from 'node:stream';
import { afterEach, expect, it, vi } from 'vitest';
import type { GuardedFetchDeps } from '../../src/net/guarded-fetch.js';
import { OpenAiImages } from '../../src/providers/openai-compatible/images.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/media.js';
import {
  expectChargedActualOnce,
  settleBodyOf,
  startTaskGateway,
  workUntil,
  type TaskBody,
} from '../helpers/tasks.js';

const BALANCE = 100_000_000;
const LEASE_MS = 300;
const RESULT_URL = 'https://cdn.example/late-1.png';

/** A CDN on another origin (the guarded fetch's injected network) serving the picture. */
function cdn(): GuardedFetchDeps {
  return {
    resolve: (host) => Promise.resolve(host === 'cdn.example' ? ['93.184.216.34'] : []),
    get: () =>
      Promise.resolve({
        status: 200,
        location: undefined,
        contentType: 'image/png',
        contentLength: undefined,
        body: Readable.from([png(256, 256)]),
      }),
  };
}

/**
 * Issue 18, Deliver 1 ("a late answer ... is not thrown away"), for a synchronous upstream
 * (images): the answer is the result itself, and its upstream id (the answer's request id) names
 * nothing that can be polled. A worker stalled past its lease whose image answer arrives late
 * used to move the task to `running` by that id alone: every poll then failed ("images are
 * synchronous") and the task stayed `running` with its hold for good. Now the answer's URLs are
 * kept and downloaded by the next step; an answer of bytes (`b64_json`, issue 35 Found 15) is
 * stored as the task's undelivered output before the guarded move, and the next step finishes
 * from it.
 */
describeEachDialect('a late synchronous answer on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  /**
   * The real submission, held back until `answer()`; with `asUrl`, its image is given as a URL
   * on another origin.
   */
  function heldUpstream(asUrl: boolean) {
    let answer: () => void = () => {};
    const gate = new Promise<void>((resolve) => (answer = resolve));
    const original = Object.getOwnPropertyDescriptor(OpenAiImages.prototype, 'submit')
      ?.value as OpenAiImages['submit'];
    const submissions = vi
      .spyOn(OpenAiImages.prototype, 'submit')
      .mockImplementation(async function (
        this: OpenAiImages,
        ...args: Parameters<OpenAiImages['submit']>
      ) {
        await gate;
        const result = await original.apply(this, args);
        if (!asUrl || result.kind !== 'completed') return result;
        return { ...result, outputs: [this.resultSource(RESULT_URL)] };
      });
    return { submissions, answer: () => answer() };
  }

  /** Creates an image, lets the stalled worker send it, and another instance mark it unknown. */
  async function stalledImage(asUrl: boolean) {
    gateway = await startTaskGateway(dialect, {
      services: {
        fetchDeps: cdn(),
        worker: {
          leaseMs: LEASE_MS,
          renewalFault: () => {
            throw new Error('stalled');
          },
        },
      },
    });
    const client = gateway;
    const upstream = heldUpstream(asUrl);
    const { accountId, key } = await client.account(BALANCE);
    const created = await client.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: 'a late lantern', size: '256x256' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const id = created.json<TaskBody>().id;
    const store = client.services.taskStore;
    const first = client.services.taskWorker.tick();
    while ((await store.byId(id))?.submission !== 'sending')
      await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 2));
    // Another worker finds it mid-submission (the same worker: its claim is a new one).
    expect(await client.services.taskWorker.tick()).toBe(1);
    expect((await store.byId(id))?.status).toBe('submission_unknown');
    upstream.answer();
    await first;
    return { client, id, key, accountId, ...upstream };
  }

  it('an image answer with a URL that comes after the claim was lost is kept, delivered and settled once', async () => {
    const { client, id, key, accountId, submissions } = await stalledImage(true);
    const row = await client.services.taskStore.byId(id);
    expect(row).toMatchObject({ status: 'running', submission: 'accepted' });
    expect(row?.result_sources).toContain(RESULT_URL);
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(id))?.status === 'succeeded',
      20_000,
    );
    const task = (await client.call('GET', `/v1/images/${id}`, { key })).json<TaskBody>();
    const settled = await client.call('POST', `/v1/images/${id}/settle`, {
      key,
      body: settleBodyOf(task),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    await expectChargedActualOnce(client, accountId, BALANCE, task);
    expect(submissions).toHaveBeenCalledTimes(1);
  }, 60_000);

  it('an image answer of bytes (b64_json) that comes after the claim was lost is stored, delivered and settled once', async () => {
    const { client, id, key, accountId, submissions } = await stalledImage(false);
    // Issue 35, Found 15: the bytes were dropped and the task left for an operator with nothing
    // to attach. They are now placed as the task's undelivered output before the guarded move.
    const row = await client.services.taskStore.byId(id);
    expect(row).toMatchObject({ status: 'running', submission: 'accepted' });
    expect(JSON.parse(row?.result_sources ?? 'null')).toMatchObject({ stored: 1 });
    const db = client.services.store.db;
    const kept = await db.selectFrom('assets').selectAll().where('task_id', '=', id).execute();
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({
      delivered_at: null,
      deleted_at: null,
      media_type: 'image/png',
    });
    const late = await client.services.metrics.taskLateAnswers.get();
    expect(late.values).toContainEqual(
      expect.objectContaining({ labels: { outcome: 'kept' }, value: 1 }),
    );
    await workUntil(
      client,
      async () => (await client.services.taskStore.byId(id))?.status === 'succeeded',
      20_000,
    );
    const task = (await client.call('GET', `/v1/images/${id}`, { key })).json<TaskBody>();
    // The bill is the one image delivered at its price (256x256, standard).
    expect(task.billing.actual_amount).toBe(10_000);
    const settled = await client.call('POST', `/v1/images/${id}/settle`, {
      key,
      body: settleBodyOf(task),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    expect(settled.json<TaskBody>().outputs?.map((output) => output.asset_id)).toEqual([
      kept[0]?.id,
    ]);
    await expectChargedActualOnce(client, accountId, BALANCE, task);
    const delivered = await db.selectFrom('assets').selectAll().where('task_id', '=', id).execute();
    expect(delivered).toHaveLength(1);
    expect(delivered[0]?.delivered_at).not.toBeNull();
    expect(submissions).toHaveBeenCalledTimes(1);
  }, 60_000);
});
