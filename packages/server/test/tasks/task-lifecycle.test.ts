import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';
import { finishedTask, settleBodyOf, startTaskGateway, type TaskBody } from '../helpers/tasks.js';

interface Quote {
  object: string;
  quoted_amount: number | null;
  price_version: string;
  line_items: unknown[];
  closed_reasons: string[];
}

describeEachDialect('image and video tasks on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  async function quoteOf(key: string, path: string, body: unknown): Promise<Quote> {
    if (gateway === undefined) throw new Error('no gateway');
    const response = await gateway.call('POST', path, { key, body });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<Quote>();
  }

  it('a quote is read-only: no record, no hold, no task', async () => {
    gateway = await startTaskGateway(dialect);
    const { accountId, key } = await gateway.account(10_000_000);
    const idempotencyKey = randomUUID();
    const quote = await gateway.call('POST', '/v1/images/quote', {
      key,
      idempotencyKey,
      body: { model: 'sim-image', prompt: 'a red fox', size: '256x256' },
    });
    expect(quote.statusCode).toBe(200);
    expect(quote.json()).toMatchObject({
      object: 'quote',
      model: 'sim-image',
      currency: 'CNY_MICRO',
      closed_reasons: [],
    });
    expect(quote.json<Quote>().quoted_amount).toBeGreaterThan(0);
    expect(await gateway.balance(accountId)).toEqual({
      balance: 10_000_000,
      held: 0,
      available: 10_000_000,
    });
    const record = await gateway.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
      key,
    });
    expect(record.statusCode).toBe(404);
    const tasks = await gateway.services.store.db.selectFrom('tasks').select('id').execute();
    expect(tasks).toEqual([]);
  });

  it('a closed combination quotes 200 with closed_reasons and no amount, and cannot be created', async () => {
    gateway = await startTaskGateway(dialect);
    const { accountId, key } = await gateway.account(10_000_000);
    const quote = await quoteOf(key, '/v1/images/quote', {
      model: 'sim-image',
      prompt: 'x',
      size: '999x999',
    });
    expect(quote.quoted_amount).toBeNull();
    expect(quote.closed_reasons.join(' ')).toContain('999x999');
    const created = await gateway.call('POST', '/v1/images/generations', {
      key,
      body: { model: 'sim-image', prompt: 'x', size: '999x999' },
    });
    expect(created.statusCode).toBe(400);
    expect(created.json()).toMatchObject({ error: { code: 'UNSUPPORTED_CAPABILITY' } });
    expect((await gateway.balance(accountId)).held).toBe(0);
  });

  it('a price change between quote and creation is 409 PRICE_CHANGED, nothing created', async () => {
    gateway = await startTaskGateway(dialect);
    const { accountId, key } = await gateway.account(10_000_000);
    const body = { model: 'sim-image', prompt: 'x', size: '256x256' };
    const quote = await quoteOf(key, '/v1/images/quote', body);
    const prices = (await gateway.admin('GET', '/admin/v1/models/sim-image/prices')) as {
      data: { prices: Record<string, unknown> }[];
    };
    const current = prices.data[0]?.prices ?? {};
    await gateway.admin('PUT', '/admin/v1/models/sim-image/prices', {
      ...current,
      per_image: { '256x256': { standard: 12_345 }, '512x512': { standard: 22_000 } },
    });
    const created = await gateway.call('POST', '/v1/images/generations', {
      key,
      body: {
        ...body,
        expected_price_version: quote.price_version,
        expected_quote_amount: quote.quoted_amount,
      },
    });
    expect(created.statusCode, created.body).toBe(409);
    expect(created.json()).toMatchObject({ error: { code: 'PRICE_CHANGED' } });
    expect((await gateway.balance(accountId)).held).toBe(0);
    expect(await gateway.services.store.db.selectFrom('tasks').select('id').execute()).toEqual([]);
  });

  it('too little money is 402: no task, no upstream call', async () => {
    gateway = await startTaskGateway(dialect);
    const { key } = await gateway.account(1);
    const created = await gateway.call('POST', '/v1/videos', {
      key,
      body: { model: 'sim-video', prompt: 'x' },
    });
    expect(created.statusCode).toBe(402);
    expect(created.json()).toMatchObject({ error: { code: 'INSUFFICIENT_FUNDS' } });
    expect(await gateway.services.store.db.selectFrom('tasks').select('id').execute()).toEqual([]);
  });

  it.each([
    [
      'image',
      '/v1/images/generations',
      '/v1/images',
      { model: 'sim-image', prompt: 'a red fox', size: '256x256', n: 2 },
    ],
    [
      'video',
      '/v1/videos',
      '/v1/videos',
      { model: 'sim-video', prompt: 'waves', seconds: 2, size: '320x240' },
    ],
  ] as const)(
    'full %s path: create 202 -> succeeded -> 409 before settling -> settle -> delivered, other key 404',
    async (kind, createPath, base, body) => {
      gateway = await startTaskGateway(dialect);
      const client = gateway;
      const { accountId, key } = await client.account(100_000_000);
      const other = await client.newKey(accountId);
      const stranger = await client.account(100_000_000);
      const quote = await quoteOf(key, `${base}/quote`, body);
      const created = await client.call('POST', createPath, {
        key,
        body: {
          ...body,
          expected_price_version: quote.price_version,
          expected_quote_amount: quote.quoted_amount,
        },
      });
      expect(created.statusCode, created.body).toBe(202);
      const task = created.json<TaskBody>();
      expect(task).toMatchObject({
        object: `${kind}.task`,
        status: 'queued',
        billing: {
          settlement_pending: false,
          reserved_amount: quote.quoted_amount,
          state: 'reserved',
        },
      });
      expect(await client.balance(accountId)).toMatchObject({ held: quote.quoted_amount });
      // The creation record points at its task and cannot be settled through the record.
      const record = (await client.call('GET', `/v1/requests/${task.request_id}`, { key })).json<{
        status: string;
        task_id: string;
        canSettle: boolean;
      }>();
      expect(record).toMatchObject({ status: 'accepted', task_id: task.id, canSettle: false });
      const throughRecord = await client.call('POST', `/v1/requests/${task.request_id}/settle`, {
        key,
      });
      expect(throughRecord.statusCode).toBe(409);
      expect(throughRecord.json<{ error: { message: string } }>().error.message).toContain(
        'settlement.url',
      );

      const path = `${base}/${task.id}`;
      for (const outsider of [other.key, stranger.key]) {
        const read = await client.call('GET', path, { key: outsider });
        expect(read.statusCode).toBe(404);
        expect(read.json()).toMatchObject({ error: { code: 'TASK_NOT_FOUND' } });
      }
      const done = await finishedTask(client, key, path);
      expect(done.status).toBe('succeeded');
      expect(done.billing.settlement_pending).toBe(true);
      // Settlement is possible for the default window (7 days) from when it was priced.
      expect(done.settlement).toEqual({
        url: `${path}/settle`,
        method: 'POST',
        expires_at: new Date(Date.parse(done.finished_at ?? '') + 7 * 86_400_000).toISOString(),
      });
      expect(done.outputs).toBeUndefined();
      expect(done.billing.actual_amount).toBeGreaterThan(0);
      expect(done.billing.actual_amount).toBeLessThanOrEqual(quote.quoted_amount ?? 0);
      if (kind === 'video') {
        const early = await client.call('GET', `${path}/content`, { key });
        expect(early.statusCode).toBe(409);
        expect(early.json<{ error: { message: string } }>().error.message).toContain('settle');
      }
      const settled = await client.call('POST', `${path}/settle`, {
        key,
        body: settleBodyOf(done),
      });
      expect(settled.statusCode, settled.body).toBe(200);
      const delivered = settled.json<TaskBody>();
      expect(delivered.billing).toMatchObject({
        settlement_pending: false,
        state: 'settled',
        settled_amount: done.billing.actual_amount,
      });
      expect(delivered.settlement).toBeUndefined();
      expect(delivered.outputs?.length).toBe(kind === 'image' ? 2 : 1);
      expect(await client.balance(accountId)).toEqual({
        balance: 100_000_000 - (done.billing.actual_amount ?? 0),
        held: 0,
        available: 100_000_000 - (done.billing.actual_amount ?? 0),
      });
      const output = delivered.outputs?.[0];
      if (output === undefined) throw new Error('no output');
      const content = await client.call('GET', output.content_url, { key });
      expect(content.statusCode).toBe(200);
      expect(content.headers['content-type']).toBe(kind === 'image' ? 'image/png' : 'video/mp4');
      const partial = await client.call('GET', output.content_url, {
        key,
        headers: { range: 'bytes=0-9' },
      });
      expect(partial.statusCode).toBe(206);
      expect(partial.rawPayload.length).toBe(10);
      expect((await client.call('GET', output.content_url, { key: stranger.key })).statusCode).toBe(
        404,
      );
      const metrics = (await client.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(metrics).toMatch(/^tollgate_tasks\{status="succeeded"\} 1$/m);
      expect(metrics).toMatch(/^tollgate_task_settlements_total\{outcome="settled"\} 1$/m);
      expect(metrics).toMatch(/^tollgate_task_transitions_total\{to="succeeded"\} 1$/m);
      expect(metrics).toMatch(/^tollgate_task_worker_lag_seconds_count [1-9]/m);
      // Once the task's money is resolved, its expired creation record is purged like others.
      const purged = await client.services.requests.records.purgeExpired(
        Date.now() + 365 * 86_400_000,
      );
      expect(purged).toBeGreaterThanOrEqual(1);
      expect(
        (await client.call('GET', `/v1/requests/${task.request_id}`, { key })).statusCode,
      ).toBe(404);
      expect((await client.call('GET', path, { key })).statusCode).toBe(200);
      if (kind === 'video') {
        expect((await client.call('GET', output.content_url, { key: other.key })).statusCode).toBe(
          404,
        );
        expect(output).toMatchObject({ seconds: 2, width: 320, height: 240 });
      }
    },
    60_000,
  );
});
