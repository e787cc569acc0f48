import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { fakeNetwork, startImageUrlGateway, tinyPng } from '../helpers/fake-network.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The billed text routes (chat, embeddings, rerank) leave the judgement of a used
 * Idempotency-Key to their claim (http/idempotency-judgement.ts): the claim meets a used key
 * anyway, so the guard's read before it was one more database round trip on every accepted
 * request. The risks of leaving it out: a used key with a changed body slipping past the claim
 * (charged twice, or the first answer lost); work done for a request whose key is not its own
 * (an image URL fetched, a conversation turn taken) before the claim refuses it; and the read
 * silently still made, so the saving is not there.
 */

const chatBody = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'sim-chat',
  messages: [{ role: 'user', content }],
  ...extra,
});

/** One accepted request of each text route, the body changed by `variant`. */
const textRequests = (variant: string) => [
  { url: '/v1/chat/completions', body: chatBody(`hello ${variant}`) },
  { url: '/v1/chat/completions', body: chatBody(`stream ${variant}`, { stream: true }) },
  { url: '/v1/embeddings', body: { model: 'sim-embed', input: `text ${variant}` } },
  {
    url: '/v1/rerank',
    body: { model: 'sim-rerank', query: `cat ${variant}`, documents: ['a cat', 'a dog'] },
  },
];

describeEachDialect('the text routes judge a used key at their claim on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  it('makes no read of the key before the claim of an accepted text request (a task creation still does)', async () => {
    gateway = await startGateway(dialect);
    const { key } = await gateway.account(100_000_000);
    const reads = vi.spyOn(gateway.services.requests.records, 'fingerprintOf');
    for (const { url, body } of textRequests('a')) {
      const response = await gateway.call('POST', url, { key, body });
      expect(response.statusCode, `${url} ${response.body}`).toBe(200);
    }
    expect(reads).not.toHaveBeenCalled();
    const task = await gateway.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: 'a fox', size: '256x256' },
    });
    expect(task.statusCode, task.body).toBe(202);
    expect(reads).toHaveBeenCalledTimes(1);
  });

  it('answers a used key with a changed body 409 from the claim: nothing charged, the first answer still replayed', async () => {
    gateway = await startGateway(dialect);
    const { key, accountId } = await gateway.account(100_000_000);
    const firsts = textRequests('first');
    const changed = textRequests('changed');
    for (const [index, first] of firsts.entries()) {
      const idempotencyKey = randomUUID();
      const answered = await gateway.call('POST', first.url, {
        key,
        idempotencyKey,
        body: first.body,
      });
      expect(answered.statusCode, answered.body).toBe(200);
      const balance = await gateway.balance(accountId);
      const again = await gateway.call('POST', first.url, {
        key,
        idempotencyKey,
        body: changed[index]?.body,
      });
      expect(again.statusCode, again.body).toBe(409);
      expect(again.json()).toMatchObject({
        error: { code: 'IDEMPOTENCY_CONFLICT', param: 'Idempotency-Key' },
      });
      expect(await gateway.balance(accountId)).toEqual(balance);
      const replayed = await gateway.call('POST', first.url, {
        key,
        idempotencyKey,
        body: first.body,
      });
      expect(replayed.statusCode, replayed.body).toBe(200);
      expect(replayed.headers['idempotent-replayed']).toBe('true');
      expect(replayed.body).toBe(answered.body);
    }
  });

  it('answers used keys arriving together with fresh ones exactly: each fresh one charged once, each used one 409', async () => {
    gateway = await startGateway(dialect);
    const { key, accountId } = await gateway.account(100_000_000);
    const used = Array.from({ length: 6 }, () => randomUUID());
    for (const idempotencyKey of used) {
      const first = await gateway.call('POST', '/v1/embeddings', {
        key,
        idempotencyKey,
        body: { model: 'sim-embed', input: 'first' },
      });
      expect(first.statusCode, first.body).toBe(200);
    }
    const before = await gateway.balance(accountId);
    const answers = await Promise.all([
      ...used.map((idempotencyKey) =>
        gateway!.call('POST', '/v1/embeddings', {
          key,
          idempotencyKey,
          body: { model: 'sim-embed', input: 'changed' },
        }),
      ),
      ...used.map(() =>
        gateway!.call('POST', '/v1/embeddings', {
          key,
          body: { model: 'sim-embed', input: 'first' },
        }),
      ),
    ]);
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses).toEqual([...used.map(() => 409), ...used.map(() => 200)]);
    // Every fresh request was charged what the first ones were, once: the same body, the same bill.
    const firstCharge = (100_000_000 - before.balance) / used.length;
    expect(Number.isInteger(firstCharge) && firstCharge > 0).toBe(true);
    expect(await gateway.balance(accountId)).toEqual({
      balance: before.balance - firstCharge * used.length,
      held: 0,
      available: before.balance - firstCharge * used.length,
    });
  });

  it('judges the key before taking a conversation turn: a used key names no turn', async () => {
    gateway = await startGateway(dialect);
    const { key } = await gateway.account(100_000_000);
    const reads = vi.spyOn(gateway.services.requests.records, 'fingerprintOf');
    const idempotencyKey = randomUUID();
    const conversation = { conversation_id: `conv_${randomUUID()}` };
    const first = await gateway.call('POST', '/v1/chat/completions', {
      key,
      idempotencyKey,
      body: chatBody('hello', conversation),
    });
    expect(first.statusCode, first.body).toBe(200);
    expect(reads).toHaveBeenCalledTimes(1);
    const changed = await gateway.call('POST', '/v1/chat/completions', {
      key,
      idempotencyKey,
      body: chatBody('changed', conversation),
    });
    expect(changed.statusCode, changed.body).toBe(409);
    expect(changed.json()).toMatchObject({ error: { code: 'IDEMPOTENCY_CONFLICT' } });
    // The conversation is free: its next turn is taken at once.
    const next = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: chatBody('next', conversation),
    });
    expect(next.statusCode, next.body).toBe(200);
  });
});

describe('a caller image URL under a used key', () => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  it('is never fetched: the key is judged before the fetch', async () => {
    const network = fakeNetwork(
      { 'images.example': ['93.184.216.34'] },
      {
        'https://images.example/cat.png': { status: 200, body: tinyPng },
        'https://images.example/dog.png': { status: 200, body: tinyPng },
      },
    );
    gateway = await startImageUrlGateway(network);
    const { key } = await gateway.account(1_000_000);
    const withImage = (url: string) => ({
      model: 'sim-vision',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }],
    });
    const idempotencyKey = randomUUID();
    const first = await gateway.call('POST', '/v1/chat/completions', {
      key,
      idempotencyKey,
      body: withImage('https://images.example/cat.png'),
    });
    expect(first.statusCode, first.body).toBe(200);
    const changed = await gateway.call('POST', '/v1/chat/completions', {
      key,
      idempotencyKey,
      body: withImage('https://images.example/dog.png'),
    });
    expect(changed.statusCode, changed.body).toBe(409);
    expect(changed.json()).toMatchObject({ error: { code: 'IDEMPOTENCY_CONFLICT' } });
    expect(network.fetched).toEqual(['https://images.example/cat.png @ 93.184.216.34']);
  });
});
