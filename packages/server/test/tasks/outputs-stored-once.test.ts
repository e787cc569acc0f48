import { Readable } from 'node:stream';
import type { H3Task } from '@tollgate/protocol';
import { afterEach, expect, it, vi } from 'vitest';
import type { GuardedFetchDeps } from '../../src/net/guarded-fetch.js';
import { ArkH3Tasks } from '../../src/providers/ark/h3-tasks.js';
import { TaskStore } from '../../src/tasks/task-store.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';
import { h3QuoteAndSubmit, h3SettleBody } from '../helpers/h3.js';
import { mp4 } from '../helpers/media.js';
import { expectChargedActualOnce, startTaskGateway, workUntil } from '../helpers/tasks.js';

const BALANCE = 100_000_000;
const VIDEO_URL = 'https://cdn.example/video-1.mp4';

/** A CDN on another origin (the guarded fetch's injected network) that counts its fetches. */
function countingCdn(): GuardedFetchDeps & { fetched: string[] } {
  const fetched: string[] = [];
  return {
    fetched,
    resolve: (host) => Promise.resolve(host === 'cdn.example' ? ['93.184.216.34'] : []),
    get: (url) => {
      fetched.push(url.href);
      return Promise.resolve({
        status: 200,
        location: undefined,
        contentType: 'video/mp4',
        contentLength: undefined,
        body: Readable.from([mp4(4)]),
      });
    },
  };
}

/** How the transaction that finishes the task fails, once, after the outputs were stored. */
const FINAL_TRANSACTION_FAILURES = [
  {
    name: 'the database fails',
    fail: (): Promise<boolean> => Promise.reject(new Error('the connection was lost')),
  },
  {
    name: 'the claim was lost (the fenced update finds another token)',
    fail: (): Promise<boolean> => Promise.resolve(false),
  },
] as const;

/**
 * Issue 18, Deliver 7 (outputs never downloaded twice for one delivery): a step downloaded and
 * stored the outputs, then the transaction that finishes the task failed (a lost claim, a
 * database error, a crash). The next step finishes with the outputs already stored instead of
 * downloading them again; the task succeeds once, with one asset, delivered on settlement.
 */
describeEachDialect('outputs stored by a step whose finish failed on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  /**
   * A gateway whose H3 result is a video on the counting CDN, and whose first transaction
   * finishing a task fails as `fail` says; `finishes()` counts the finishing moves tried.
   */
  async function gatewayFailingFirstFinish(fail: () => Promise<boolean>) {
    const cdn = countingCdn();
    const client = await startTaskGateway(dialect, { services: { fetchDeps: cdn } });
    gateway = client;
    const db = client.services.store.db;
    const original = Object.getOwnPropertyDescriptor(ArkH3Tasks.prototype, 'poll')
      ?.value as ArkH3Tasks['poll'];
    vi.spyOn(ArkH3Tasks.prototype, 'poll').mockImplementation(async function (
      this: ArkH3Tasks,
      ...args: Parameters<ArkH3Tasks['poll']>
    ) {
      const result = await original.apply(this, args);
      if (result.kind !== 'completed') return result;
      return { ...result, outputs: [this.resultSource(VIDEO_URL)] };
    });
    const move = Object.getOwnPropertyDescriptor(TaskStore.prototype, 'move')
      ?.value as TaskStore['move'];
    let finishes = 0;
    vi.spyOn(TaskStore.prototype, 'move').mockImplementation(async function (
      this: TaskStore,
      ...args: Parameters<TaskStore['move']>
    ) {
      if (args[1].status?.to !== 'succeeded') return move.apply(this, args);
      finishes += 1;
      return finishes > 1 ? move.apply(this, args) : fail();
    });
    return { client, db, cdn, finishes: () => finishes };
  }

  it.each(FINAL_TRANSACTION_FAILURES)(
    'when $name after the download, the next step delivers without fetching the output again',
    async ({ fail }) => {
      const { client, db, cdn, finishes } = await gatewayFailingFirstFinish(fail);
      const { accountId, key } = await client.account(BALANCE);
      const { response } = await h3QuoteAndSubmit(client, key, {
        action: 'generate',
        prompt: 'a lighthouse at dusk',
        parameters: { resolution: '720p', ratio: '16:9', duration: 4, watermark: false },
      });
      expect(response.statusCode, response.body).toBe(202);
      const id = response.json<H3Task>().id;
      await workUntil(
        client,
        async () => {
          const row = await client.services.taskStore.byId(id);
          // Between ticks no step runs: a lost claim's lease is made to run out at once (a retry's
          // back-off is skipped by `workUntil`).
          if (row?.status === 'running')
            await db
              .updateTable('tasks')
              .set({ lease_owner: null, lease_until: null })
              .where('id', '=', id)
              .execute();
          return row?.status !== 'queued' && row?.status !== 'running';
        },
        30_000,
      );
      expect(finishes()).toBe(2);
      expect(cdn.fetched).toEqual([VIDEO_URL]);
      const task = (await client.call('GET', `/v1/h3/tasks/${id}`, { key })).json<H3Task>();
      expect(task).toMatchObject({ status: 'succeeded', billing: { state: 'pending' } });
      // One asset for the one output: the row the first step stored, none left over.
      const assets = await db.selectFrom('assets').selectAll().where('task_id', '=', id).execute();
      expect(assets).toHaveLength(1);
      expect(assets[0]).toMatchObject({ deleted_at: null, delivered_at: null });
      const settled = await client.call('POST', `/v1/h3/tasks/${id}/settle`, {
        key,
        body: h3SettleBody(task),
      });
      expect(settled.statusCode, settled.body).toBe(200);
      expect(settled.json<H3Task>().asset_id).toBe(assets[0]?.id);
      await expectChargedActualOnce(client, accountId, BALANCE, task);
    },
    60_000,
  );

  it('outputs kept for a task an operator then releases are deleted, nothing charged', async () => {
    const { client, db, cdn, finishes } = await gatewayFailingFirstFinish(() =>
      Promise.reject(new Error('the connection was lost')),
    );
    const { accountId, key } = await client.account(BALANCE);
    const { response } = await h3QuoteAndSubmit(client, key, {
      action: 'generate',
      prompt: 'a lighthouse at dusk',
      parameters: { resolution: '720p', ratio: '16:9', duration: 4, watermark: false },
    });
    expect(response.statusCode, response.body).toBe(202);
    const id = response.json<H3Task>().id;
    await workUntil(client, async () => finishes() === 1);
    expect(cdn.fetched).toEqual([VIDEO_URL]);
    expect((await client.services.taskStore.byId(id))?.status).toBe('running');
    await client.admin('POST', `/admin/v1/tasks/${id}/resolve`, {
      action: 'release',
      reason: 'the caller gave up',
    });
    const assets = await db.selectFrom('assets').selectAll().where('task_id', '=', id).execute();
    expect(assets).toHaveLength(1);
    expect(assets[0]?.deleted_at).not.toBeNull();
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  }, 60_000);
});
