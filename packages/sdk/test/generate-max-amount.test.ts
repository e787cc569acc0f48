import { afterEach, describe, expect, it } from 'vitest';
import { MaxAmountExceededError, QuoteClosedError, TaskFailedError } from '../src/index.js';
import { clientFor, countRows, liveGateway, type TestGateway } from './helpers/gateway.js';

/*
 * The risk: the high-level helpers spend more than the caller allowed — creating a task whose
 * quote is above `maxAmount` or closed, or settling a bill above it — or settle a failed task.
 */

let gateway: TestGateway | undefined;

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

const fastWait = { initialMs: 100, maxMs: 400, timeoutMs: 20_000 };

describe('generate within maxAmount', () => {
  it('a quote above maxAmount creates nothing and holds nothing', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const { key, accountId } = await gateway.account(1_000_000);
    const client = clientFor(live.baseURL, key);
    const error = await client.videos
      .generate(
        { model: 'sim-video', prompt: 'sea', seconds: 2, size: '320x240' },
        { maxAmount: 39_999 },
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MaxAmountExceededError);
    expect(error).toMatchObject({ stage: 'quote', amount: 40_000, maxAmount: 39_999 });
    expect(await countRows(gateway, 'tasks')).toBe(0);
    expect(await countRows(gateway, 'holds')).toBe(0);
    expect(await gateway.balance(accountId)).toEqual({
      balance: 1_000_000,
      held: 0,
      available: 1_000_000,
    });
    expect(await client.pendingJobs()).toEqual([]);
  });

  it('a quote with closed_reasons creates nothing', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const { key } = await gateway.account(10_000_000);
    const client = clientFor(live.baseURL, key);
    const input = {
      model: 'sim-h3',
      action: 'generate' as const,
      prompt: 'a duration the model does not offer',
      parameters: { resolution: '480p', duration: 7 },
    };
    const error = await client.h3
      .generate(input, { maxAmount: 10_000_000 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(QuoteClosedError);
    expect((error as QuoteClosedError).closedReasons.length).toBeGreaterThan(0);
    // submit refuses the closed quote without sending it, too.
    const quote = await client.h3.quote(input);
    await expect(client.h3.submit(input, quote)).rejects.toBeInstanceOf(QuoteClosedError);
    expect(await countRows(gateway, 'tasks')).toBe(0);
  });

  it('an actual amount above maxAmount stops before settling; a later run with a higher maxAmount settles the same task', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const { key, accountId } = await gateway.account(1_000_000);
    const client = clientFor(live.baseURL, key);
    // Quoted 4 s (80 000); the upstream delivers 2 s, billed 40 000.
    const input = {
      model: 'sim-video',
      prompt: 'rain [sim:task_seconds=0] [sim:deliver_seconds=2]',
      seconds: 4,
      size: '320x240',
    };
    // A first run within the quote, which dies before settling (here: a run given a lower limit
    // for the bill, as a resumed script might be).
    const crashed = clientFor(live.baseURL, key, {
      journal: client.journal,
      fetch: async (url, init) => {
        if (init.method === 'GET' && /\/v1\/videos\/task_/.test(url)) throw new Error('killed');
        return fetch(url, init);
      },
    });
    await expect(
      crashed.videos.generate(input, { maxAmount: 80_000, wait: fastWait }),
    ).rejects.toThrow();

    const stopped = await client.videos
      .generate(input, { maxAmount: 39_999, wait: fastWait })
      .catch((caught: unknown) => caught);
    expect(stopped).toBeInstanceOf(MaxAmountExceededError);
    expect(stopped).toMatchObject({ stage: 'bill', amount: 40_000, maxAmount: 39_999 });
    const task = (stopped as MaxAmountExceededError).task;
    expect(task?.billing).toMatchObject({ state: 'pending', settlement_pending: true });
    expect(await client.videos.get(task?.id ?? '')).toMatchObject({
      billing: { state: 'pending' },
    });
    expect(await gateway.balance(accountId)).toMatchObject({ balance: 1_000_000, held: 80_000 });
    expect(await client.pendingJobs()).toMatchObject([{ step: 'stopped', taskId: task?.id }]);

    const delivery = await client.videos.generate(input, { maxAmount: 40_000, wait: fastWait });
    expect(delivery.task.id).toBe(task?.id);
    expect(delivery.amount).toBe(40_000);
    expect(await countRows(gateway, 'tasks')).toBe(1);
    expect(await gateway.balance(accountId)).toEqual({
      balance: 960_000,
      held: 0,
      available: 960_000,
    });
    await gateway.expectLedgerClean();
  });

  it('a failed task is reported, not settled, and costs nothing', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const { key, accountId } = await gateway.account(1_000_000);
    const client = clientFor(live.baseURL, key);
    const error = await client.videos
      .generate(
        {
          model: 'sim-video',
          prompt: 'storm [sim:task=fail] [sim:task_seconds=0]',
          seconds: 1,
          size: '320x240',
        },
        { maxAmount: 20_000, wait: fastWait },
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TaskFailedError);
    expect((error as TaskFailedError).task).toMatchObject({
      status: 'failed',
      billing: { state: 'released' },
    });
    expect(await gateway.balance(accountId)).toEqual({
      balance: 1_000_000,
      held: 0,
      available: 1_000_000,
    });
    await gateway.expectLedgerClean();
  });
});
