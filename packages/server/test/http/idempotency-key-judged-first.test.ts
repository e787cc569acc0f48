import { randomUUID } from 'node:crypto';
import type { H3Task } from '@tollgate/protocol';
import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { embeddingsOnlyConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import { finishedH3, h3QuoteAndSubmit, h3SettleBody, type H3Input } from '../helpers/h3.js';
import { png } from '../helpers/media.js';
import { finishedTask, settleBodyOf, type TaskBody } from '../helpers/tasks.js';

/**
 * Risk: a used Idempotency-Key sent with another request is judged by whatever rule of the
 * route happens to run first (a digest, a model, a task id), so the caller gets a code that
 * sends it fixing the wrong thing — or, for a settle sent to another task with the key of the
 * first, a false success (the first task's answer replayed, the second left unpaid). The key is
 * judged first, on every business POST, with a fingerprint that includes the path's values.
 */

const h3Input = (prompt: string): H3Input => ({
  action: 'generate',
  prompt,
  parameters: { resolution: '720p', duration: 4 },
});

describeEachDialect('the idempotency key judged first, on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function start(config?: Parameters<typeof startGateway>[1]): Promise<TestGateway> {
    gateway = await startGateway(dialect, config);
    return gateway;
  }

  /** Sends `first` (expecting `firstStatus`), then `second` with the same key: 409 conflict. */
  async function expectConflict(
    client: TestGateway,
    key: string,
    first: { url: string; body?: unknown; status: number },
    second: { url: string; body?: unknown },
  ): Promise<void> {
    const idempotencyKey = randomUUID();
    const answered = await client.call('POST', first.url, {
      key,
      idempotencyKey,
      ...(first.body === undefined ? {} : { body: first.body }),
    });
    expect(answered.statusCode, answered.body).toBe(first.status);
    const again = await client.call('POST', second.url, {
      key,
      idempotencyKey,
      ...(second.body === undefined ? {} : { body: second.body }),
    });
    expect(again.statusCode, again.body).toBe(409);
    expect(again.json()).toMatchObject({
      error: { code: 'IDEMPOTENCY_CONFLICT', param: 'Idempotency-Key' },
    });
    expect(again.headers['idempotent-replayed']).toBeUndefined();
  }

  /** A finished, priced task of `family` awaiting settlement. */
  async function pendingTask(client: TestGateway, key: string, family: 'images' | 'videos') {
    const created = await client.call(
      'POST',
      family === 'images' ? '/v1/images/generations' : '/v1/videos',
      {
        key,
        body:
          family === 'images'
            ? { model: 'sim-image', prompt: `a fox ${randomUUID()}`, size: '256x256' }
            : { model: 'sim-video', prompt: `a fox ${randomUUID()}`, seconds: 1, size: '320x240' },
      },
    );
    expect(created.statusCode, created.body).toBe(202);
    const path = `/v1/${family}/${created.json<TaskBody>().id}`;
    const task = await finishedTask(client, key, path);
    expect(task.billing.settlement_pending, JSON.stringify(task)).toBe(true);
    return { path, task };
  }

  async function pendingH3(client: TestGateway, key: string, prompt: string): Promise<H3Task> {
    const { response } = await h3QuoteAndSubmit(client, key, h3Input(prompt));
    expect(response.statusCode, response.body).toBe(202);
    const task = await finishedH3(client, key, response.json<H3Task>().id);
    expect(task.billing.settlement_pending, JSON.stringify(task)).toBe(true);
    return task;
  }

  it('a changed H3 prompt under a used key is IDEMPOTENCY_CONFLICT, not a digest mismatch', async () => {
    const client = await start();
    const { key } = await client.account(100_000_000);
    const idempotencyKey = randomUUID();
    const { response, quote } = await h3QuoteAndSubmit(
      client,
      key,
      h3Input('a kite'),
      idempotencyKey,
    );
    expect(response.statusCode, response.body).toBe(202);
    // The old echo with a new prompt: its digest no longer matches (a later rule) — the key first.
    const changed = await client.call('POST', '/v1/h3/tasks', {
      key,
      idempotencyKey,
      body: {
        model: 'sim-h3',
        ...h3Input('a kite, changed'),
        operation: 'submit',
        expected_input_digest: quote.input_digest,
        expected_price_version: quote.price_version,
        expected_quote_amount: quote.quoted_amount,
      },
    });
    expect(changed.statusCode, changed.body).toBe(409);
    expect(changed.json()).toMatchObject({ error: { code: 'IDEMPOTENCY_CONFLICT' } });
  }, 60_000);

  it('a changed body that would fail a later rule is IDEMPOTENCY_CONFLICT on every synchronous route', async () => {
    const client = await start();
    const { key } = await client.account(100_000_000);
    const unknownModel = 'no-such-model';
    await expectConflict(
      client,
      key,
      { url: '/v1/embeddings', body: { model: 'sim-embed', input: 'a' }, status: 200 },
      { url: '/v1/embeddings', body: { model: unknownModel, input: 'a' } },
    );
    await expectConflict(
      client,
      key,
      {
        url: '/v1/rerank',
        body: { model: 'sim-rerank', query: 'cat', documents: ['a cat', 'a dog'] },
        status: 200,
      },
      { url: '/v1/rerank', body: { model: unknownModel, query: 'cat', documents: ['a cat'] } },
    );
    await expectConflict(
      client,
      key,
      {
        url: '/v1/chat/completions',
        body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] },
        status: 200,
      },
      {
        url: '/v1/chat/completions',
        body: { model: unknownModel, messages: [{ role: 'user', content: 'hi' }] },
      },
    );
  }, 60_000);

  it('a changed task creation or share under a used key is IDEMPOTENCY_CONFLICT before its own rules', async () => {
    const client = await start();
    const { key } = await client.account(100_000_000);
    const image = { model: 'sim-image', prompt: 'a lighthouse', size: '256x256' };
    await expectConflict(
      client,
      key,
      { url: '/v1/images/generations', body: image, status: 202 },
      // A wrong echo would be 409 QUOTE_MISMATCH on its own.
      { url: '/v1/images/generations', body: { ...image, expected_quote_amount: 1 } },
    );
    const video = { model: 'sim-video', prompt: 'a lighthouse', seconds: 1, size: '320x240' };
    await expectConflict(
      client,
      key,
      { url: '/v1/videos', body: video, status: 202 },
      { url: '/v1/videos', body: { ...video, model: 'no-such-model' } },
    );
    const uploaded = await client.upload(key, png(16, 8), 'image/png');
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    const assetId = uploaded.json<{ data: { id: string } }>().data.id;
    await expectConflict(
      client,
      key,
      { url: '/v1/shares', body: { asset_id: assetId }, status: 202 },
      // An asset that does not exist would be 404 on its own.
      { url: '/v1/shares', body: { asset_id: 'asset_missing' } },
    );
  }, 60_000);

  it('an image or video settle key reused on another task is IDEMPOTENCY_CONFLICT: nothing charged, the other task still pending', async () => {
    const client = await start();
    const { key, accountId } = await client.account(100_000_000);
    for (const family of ['images', 'videos'] as const) {
      const first = await pendingTask(client, key, family);
      const second = await pendingTask(client, key, family);
      // Same amount and price version for both: the bodies are identical, only the path differs.
      expect(settleBodyOf(second.task)).toEqual(settleBodyOf(first.task));
      const before = await client.balance(accountId);
      const settledFirstKey = randomUUID();
      const settled = await client.call('POST', `${first.path}/settle`, {
        key,
        idempotencyKey: settledFirstKey,
        body: settleBodyOf(first.task),
      });
      expect(settled.statusCode, settled.body).toBe(200);
      const afterFirst = await client.balance(accountId);
      expect(afterFirst.balance).toBe(before.balance - (first.task.billing.actual_amount ?? 0));
      const reused = await client.call('POST', `${second.path}/settle`, {
        key,
        idempotencyKey: settledFirstKey,
        body: settleBodyOf(second.task),
      });
      expect(reused.statusCode, reused.body).toBe(409);
      expect(reused.json()).toMatchObject({ error: { code: 'IDEMPOTENCY_CONFLICT' } });
      expect(reused.headers['idempotent-replayed']).toBeUndefined();
      expect(await client.balance(accountId)).toEqual(afterFirst);
      const still = (await client.call('GET', second.path, { key })).json<TaskBody>();
      expect(still.billing).toMatchObject({ settlement_pending: true, state: 'pending' });
    }
  }, 90_000);

  it('an H3 settle key reused on another task is IDEMPOTENCY_CONFLICT: nothing charged, the other task still pending', async () => {
    const client = await start();
    const { key, accountId } = await client.account(100_000_000);
    const first = await pendingH3(client, key, 'a kite');
    const second = await pendingH3(client, key, 'a kite');
    expect(h3SettleBody(second)).toEqual(h3SettleBody(first));
    const settleKey = randomUUID();
    const settled = await client.call('POST', `/v1/h3/tasks/${first.id}/settle`, {
      key,
      idempotencyKey: settleKey,
      body: h3SettleBody(first),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    const afterFirst = await client.balance(accountId);
    const reused = await client.call('POST', `/v1/h3/tasks/${second.id}/settle`, {
      key,
      idempotencyKey: settleKey,
      body: h3SettleBody(second),
    });
    expect(reused.statusCode, reused.body).toBe(409);
    expect(reused.json()).toMatchObject({ error: { code: 'IDEMPOTENCY_CONFLICT' } });
    expect(await client.balance(accountId)).toEqual(afterFirst);
    const still = (await client.call('GET', `/v1/h3/tasks/${second.id}`, { key })).json<H3Task>();
    expect(still.billing).toMatchObject({ settlement_pending: true });
  }, 90_000);

  it('a request settle key reused on another awaiting record is IDEMPOTENCY_CONFLICT: nothing charged, the other still awaiting funds', async () => {
    // 1 micro-yuan per token: a reported usage above the hold leaves the record awaiting funds.
    const client = await start({ config: embeddingsOnlyConfig(1_000_000) });
    const input = 'hello world [sim:extra_tokens=50]';
    const reserve = Buffer.byteLength(input) + 8;
    const { key, accountId } = await client.account(0);
    const awaiting: string[] = [];
    for (let index = 0; index < 2; index += 1) {
      // Exactly the hold each time: the result costs more and waits for funds, hold kept.
      await client.admin('POST', `/admin/v1/accounts/${accountId}/topups`, {
        amount: reserve,
        reference: randomUUID(),
      });
      const response = await client.call('POST', '/v1/embeddings', {
        key,
        body: { model: 'sim-embed', input },
      });
      expect(response.statusCode, response.body).toBe(402);
      awaiting.push(String(response.headers['x-service-request-id']));
    }
    const [firstId, secondId] = awaiting;
    await client.admin('POST', `/admin/v1/accounts/${accountId}/topups`, {
      amount: 10 * reserve,
      reference: randomUUID(),
    });
    const settleKey = randomUUID();
    const settled = await client.call('POST', `/v1/requests/${firstId}/settle`, {
      key,
      idempotencyKey: settleKey,
    });
    expect(settled.statusCode, settled.body).toBe(200);
    const replayed = await client.call('POST', `/v1/requests/${firstId}/settle`, {
      key,
      idempotencyKey: settleKey,
    });
    expect(replayed.statusCode, replayed.body).toBe(200);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    const afterFirst = await client.balance(accountId);
    const reused = await client.call('POST', `/v1/requests/${secondId}/settle`, {
      key,
      idempotencyKey: settleKey,
    });
    expect(reused.statusCode, reused.body).toBe(409);
    expect(reused.json()).toMatchObject({ error: { code: 'IDEMPOTENCY_CONFLICT' } });
    expect(await client.balance(accountId)).toEqual(afterFirst);
    const still = (await client.call('GET', `/v1/requests/${secondId}`, { key })).json();
    expect(still).toMatchObject({ status: 'awaiting_funds', canSettle: true });
  }, 60_000);
});
