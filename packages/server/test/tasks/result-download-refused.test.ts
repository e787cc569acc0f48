import { afterEach, expect, it, vi } from 'vitest';
import type { H3Task } from '@tollgate/protocol';
import { ArkH3Tasks } from '../../src/providers/ark/h3-tasks.js';
import { guardedStream } from '../../src/net/guarded-fetch.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';
import { h3QuoteAndSubmit } from '../helpers/h3.js';
import { startTaskGateway, workUntil } from '../helpers/tasks.js';

const BALANCE = 100_000_000;

/**
 * Issue 18, Found 14 / Deliver 9: an H3 upstream that finished but gives a result URL the
 * guarded fetch refuses (plain http on another address) must not leave the task `running` for
 * good with its hold: after bounded tries it goes to the operator queue, as images do, with the
 * upstream's id and the refusal kept.
 */
describeEachDialect('a finished task whose result cannot be downloaded on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it('an H3 result URL the guarded fetch refuses ends in the operator queue after bounded tries, never running for good', async () => {
    gateway = await startTaskGateway(dialect);
    const client = gateway;
    const { accountId, key } = await client.account(BALANCE);
    // The upstream's answer names a plain-http URL on another address: the guarded fetch refuses it.
    const original = Object.getOwnPropertyDescriptor(ArkH3Tasks.prototype, 'poll')?.value as (
      this: ArkH3Tasks,
      ...args: Parameters<ArkH3Tasks['poll']>
    ) => ReturnType<ArkH3Tasks['poll']>;
    vi.spyOn(ArkH3Tasks.prototype, 'poll').mockImplementation(async function (
      this: ArkH3Tasks,
      ...args: Parameters<ArkH3Tasks['poll']>
    ) {
      const result = await original.apply(this, args);
      if (result.kind !== 'completed') return result;
      return {
        ...result,
        outputs: [
          {
            open: async (signal?: AbortSignal) => {
              const fetched = await guardedStream('http://203.0.113.7/result.mp4', {
                maxBytes: 1_000_000,
                mediaTypes: ['video/mp4'],
                timeoutMs: 2_000,
                ...(signal === undefined ? {} : { signal }),
              });
              return { body: fetched.body, mediaType: fetched.contentType ?? null };
            },
          },
        ],
      };
    });
    const { quote, response } = await h3QuoteAndSubmit(client, key, {
      action: 'generate',
      prompt: 'a lighthouse at dusk',
      parameters: { resolution: '720p', ratio: '16:9', duration: 4, watermark: false },
    });
    expect(response.statusCode, response.body).toBe(202);
    const id = response.json<H3Task>().id;
    // Each retry after its back-off, which `workUntil` skips (the gateway's clock moves to it).
    await workUntil(
      client,
      async () => {
        const row = await client.services.taskStore.byId(id);
        return row?.status !== 'queued' && row?.status !== 'running';
      },
      30_000,
    );
    const operatorView = await client.admin('GET', `/admin/v1/tasks/${id}`);
    expect(operatorView).toMatchObject({
      status: 'submission_unknown',
      submission: 'accepted',
      due_at: null,
      billing: { state: 'reserved' },
    });
    expect(operatorView['upstream_task_id']).toEqual(expect.any(String));
    expect(String(operatorView['note'])).toMatch(/could not be stored after 5 tries/);
    expect((await client.balance(accountId)).held).toBe(quote.quoted_amount);
    // The operator releases it: nothing charged.
    await client.admin('POST', `/admin/v1/tasks/${id}/resolve`, {
      action: 'release',
      reason: 'the result URL is not reachable safely',
    });
    expect(await client.balance(accountId)).toEqual({
      balance: BALANCE,
      held: 0,
      available: BALANCE,
    });
  }, 60_000);
});
