import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

describeEachDialect('embeddings and rerank on $name', (dialect) => {
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    gateway = await startGateway(dialect);
    ({ key, accountId } = await gateway.account(100_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const post = (url: string, body: unknown) => gateway.call('POST', url, { key, body });

  it('returns OpenAI-shaped, normalised embeddings of the requested dimension, for one or many inputs', async () => {
    const response = await post('/v1/embeddings', {
      model: 'sim-embed',
      input: ['red apples', 'green pears'],
      dimensions: 32,
    });
    expect(response.statusCode).toBe(200);
    const body = response.json<{
      object: string;
      data: { object: string; index: number; embedding: number[] }[];
      model: string;
      usage: { prompt_tokens: number; total_tokens: number };
    }>();
    expect(body.object).toBe('list');
    expect(body.model).toBe('sim-embed');
    expect(body.data.map((item) => [item.object, item.index, item.embedding.length])).toEqual([
      ['embedding', 0, 32],
      ['embedding', 1, 32],
    ]);
    const norm = Math.hypot(...(body.data[0]?.embedding ?? []));
    expect(norm).toBeCloseTo(1, 6);
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    const single = await post('/v1/embeddings', {
      model: 'sim-embed',
      input: 'red apples',
      dimensions: 32,
    });
    expect(single.json<{ data: { embedding: number[] }[] }>().data[0]?.embedding).toEqual(
      body.data[0]?.embedding,
    );
  });

  it('encodes base64 as little-endian float32, equal to the float form', async () => {
    const floats = (
      await post('/v1/embeddings', { model: 'sim-embed', input: 'bytes please', dimensions: 8 })
    ).json<{ data: { embedding: number[] }[] }>();
    const encoded = (
      await post('/v1/embeddings', {
        model: 'sim-embed',
        input: 'bytes please',
        dimensions: 8,
        encoding_format: 'base64',
      })
    ).json<{ data: { embedding: string }[] }>();
    const buffer = Buffer.from(encoded.data[0]?.embedding ?? '', 'base64');
    const decoded = Array.from(
      new Float32Array(buffer.buffer, buffer.byteOffset, buffer.byteLength / 4),
    );
    expect(decoded).toEqual((floats.data[0]?.embedding ?? []).map((value) => Math.fround(value)));
  });

  it('charges exactly the priced usage and shows it on the record and the balance', async () => {
    const before = await gateway.balance(accountId);
    const response = await post('/v1/embeddings', {
      model: 'sim-embed',
      input: 'exact money matters here',
    });
    const tokens = response.json<{ usage: { prompt_tokens: number } }>().usage.prompt_tokens;
    const amount = Math.ceil((tokens * 500_000) / 1_000_000);
    const record = (
      await gateway.call(
        'GET',
        `/v1/requests/${String(response.headers['x-service-request-id'])}`,
        { key },
      )
    ).json<{ bill: { amount: number; pricing_rule: string } }>();
    expect(record.bill.amount).toBe(amount);
    expect(record.bill.pricing_rule).toContain(`prompt_tokens ${tokens}`);
    expect(await gateway.balance(accountId)).toEqual({
      balance: before.balance - amount,
      held: 0,
      available: before.balance - amount,
    });
  });

  it('ranks documents by BM25 relevance, honouring top_n and return_documents', async () => {
    const documents = [
      'the cat sat on the mat',
      'dogs chase cats in the park',
      'stock markets fell today',
      { text: 'a cat and another cat' },
    ];
    const response = await post('/v1/rerank', {
      model: 'sim-rerank',
      query: 'cat',
      documents,
      top_n: 2,
      return_documents: true,
    });
    expect(response.statusCode).toBe(200);
    const body = response.json<{
      results: { index: number; relevance_score: number; document: { text: string } }[];
      usage: { total_tokens: number };
    }>();
    expect(body.results).toHaveLength(2);
    expect(body.results.map((result) => result.index)).toEqual([3, 0]);
    expect(body.results[0]?.relevance_score).toBeGreaterThan(body.results[1]?.relevance_score ?? 0);
    expect(body.results[0]?.document).toEqual({ text: 'a cat and another cat' });
    expect(body.usage.total_tokens).toBeGreaterThan(0);
    const without = await post('/v1/rerank', { model: 'sim-rerank', query: 'cat', documents });
    const results = without.json<{ results: Record<string, unknown>[] }>().results;
    expect(results).toHaveLength(4);
    expect(results[0]).not.toHaveProperty('document');
  });

  it.each([
    ['a missing input', '/v1/embeddings', { model: 'sim-embed' }, 'body.input'],
    ['an empty input string', '/v1/embeddings', { model: 'sim-embed', input: '' }, 'body.input'],
    [
      'an unknown field',
      '/v1/embeddings',
      { model: 'sim-embed', input: 'x', temperature: 1 },
      'body.temperature',
    ],
    [
      'too many dimensions',
      '/v1/embeddings',
      { model: 'sim-embed', input: 'x', dimensions: 100_000 },
      'dimensions',
    ],
    [
      'a bad encoding format',
      '/v1/embeddings',
      { model: 'sim-embed', input: 'x', encoding_format: 'hex' },
      'body.encoding_format',
    ],
    [
      'rerank without documents',
      '/v1/rerank',
      { model: 'sim-rerank', query: 'q', documents: [] },
      'body.documents',
    ],
    [
      'rerank with a zero top_n',
      '/v1/rerank',
      { model: 'sim-rerank', query: 'q', documents: ['d'], top_n: 0 },
      'body.top_n',
    ],
  ])(
    'refuses %s with 400 INVALID_INPUT naming the field, charging nothing',
    async (_name, url, body, param) => {
      const before = await gateway.balance(accountId);
      const response = await post(url, body);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param } });
      expect(await gateway.balance(accountId)).toEqual(before);
    },
  );

  it('answers 404 MODEL_NOT_FOUND for an unknown model or the wrong family', async () => {
    for (const [url, body] of [
      ['/v1/embeddings', { model: 'no-such-model', input: 'x' }],
      ['/v1/embeddings', { model: 'sim-rerank', input: 'x' }],
      ['/v1/rerank', { model: 'sim-embed', query: 'q', documents: ['d'] }],
    ] as const) {
      const response = await post(url, body);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ error: { code: 'MODEL_NOT_FOUND', param: 'model' } });
    }
  });

  it('refuses a body that is not JSON, or of another media type', async () => {
    const notJson = await gateway.app.inject({
      method: 'POST',
      url: '/v1/embeddings',
      headers: {
        authorization: `Bearer ${key}`,
        'idempotency-key': crypto.randomUUID(),
        'content-type': 'application/json',
      },
      payload: '{"model":',
    });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json()).toMatchObject({ error: { code: 'INVALID_INPUT' } });
    const text = await gateway.app.inject({
      method: 'POST',
      url: '/v1/embeddings',
      headers: {
        authorization: `Bearer ${key}`,
        'idempotency-key': crypto.randomUUID(),
        'content-type': 'text/plain',
      },
      payload: 'hello',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json()).toMatchObject({ error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
  });
});
