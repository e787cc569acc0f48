import { randomUUID } from 'node:crypto';
import type { H3Quote, H3Task } from '@tollgate/protocol';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import {
  embeddingsOnlyConfig,
  startGateway,
  testConfig,
  type TestGateway,
} from '../helpers/gateway.js';
import { finishedH3, h3SettleBody, submitBody } from '../helpers/h3.js';
import { png } from '../helpers/media.js';
import { ContractChecker, type OpenApiDocument } from '../helpers/openapi-contract.js';
import { finishedTask, settleBodyOf } from '../helpers/tasks.js';

/**
 * Risk: the OpenAPI document promises what the gateway does not answer (a field, a status, a
 * content type), so generated clients break. Every `/v1` operation of the document is driven
 * for real, to a success and to an error, and each answer is checked against the document's
 * schema for its path, method and status (helpers/openapi-contract.ts): an answer that does not
 * match fails, and so does an operation of the document that was never exercised. On every
 * dialect: a value read back from the store (a bigint, a timestamp) must keep its wire type.
 */
describeEachDialect('every /v1 answer matches the OpenAPI document on $name', (dialect) => {
  let checker: ContractChecker;
  const check = (operation: string, response: LightMyRequestResponse) =>
    checker.check(operation, response);
  const validatorFor = (pointer: string) => checker.validatorFor(pointer);
  let gateway: TestGateway;
  let funds: TestGateway;
  let key: string;
  let accountId: string;
  const call = (
    operation: string,
    url: string,
    options: Parameters<TestGateway['call']>[2] = {},
  ) => {
    const method = operation.split(' ')[0] as 'GET' | 'POST' | 'DELETE';
    return gateway.call(method, url, { key, ...options }).then((r) => check(operation, r));
  };

  beforeAll(async () => {
    gateway = await startGateway(dialect);
    funds = await startGateway(dialect, { config: embeddingsOnlyConfig(1_000_000) });
    checker = new ContractChecker(
      (await gateway.call('GET', '/v1/openapi.json')).json<OpenApiDocument>(),
    );
    ({ key, accountId } = await gateway.account(100_000_000));
  });
  afterAll(async () => {
    await gateway?.close();
    await funds?.close();
  });

  it('models, account, redemptions, usage', async () => {
    await call('GET /v1/models', '/v1/models');
    await gateway.call('GET', '/v1/models').then((r) => check('GET /v1/models', r));
    await call('GET /v1/account', '/v1/account');
    const service = await gateway.newKey(accountId, { kind: 'service' });
    await call('GET /v1/account', '/v1/account', { key: service.key });
    const code = await gateway.admin('POST', '/admin/v1/redemption-codes', { amount: 1_000 });
    await call('POST /v1/redemptions', '/v1/redemptions', { body: { code: code['code'] } });
    await call('POST /v1/redemptions', '/v1/redemptions', { body: {} });
    await call('GET /v1/account/usage', '/v1/account/usage');
    await call('GET /v1/account/usage', '/v1/account/usage?from=nonsense');

    // 429 with Retry-After, from a gateway that allows one request a minute.
    const limited = await startGateway(dialect, {
      config: testConfig({ limits: { ...testConfig().limits, requests_per_minute: 1 } }),
    });
    try {
      const owner = await limited.account(0);
      check('GET /v1/models', await limited.call('GET', '/v1/models', { key: owner.key }));
      const refused = await limited.call('GET', '/v1/models', { key: owner.key });
      expect(refused.statusCode).toBe(429);
      check('GET /v1/models', refused);
    } finally {
      await limited.close();
    }
  });

  it('chat, plain and streamed, embeddings, rerank', async () => {
    const chat = { model: 'sim-chat', messages: [{ role: 'user', content: 'hello' }] };
    await call('POST /v1/chat/completions', '/v1/chat/completions', { body: chat });
    const streamed = await call('POST /v1/chat/completions', '/v1/chat/completions', {
      body: { ...chat, stream: true, stream_options: { include_usage: true } },
    });
    expect(streamed.headers['content-type']).toContain('text/event-stream');
    const cut = await call('POST /v1/chat/completions', '/v1/chat/completions', {
      body: {
        ...chat,
        messages: [{ role: 'user', content: 'one two three four [sim:cut_after=2]' }],
        stream: true,
      },
    });
    expect(cut.body).toContain('"error"');
    await call('POST /v1/chat/completions', '/v1/chat/completions', {
      body: chat,
      idempotencyKey: null,
    });
    await call('POST /v1/embeddings', '/v1/embeddings', {
      body: { model: 'sim-embed', input: ['a', 'b'] },
    });
    await call('POST /v1/embeddings', '/v1/embeddings', { body: { model: 'nope', input: 'a' } });
    // A replay carries Idempotent-Replayed, which the document lists.
    const idempotencyKey = randomUUID();
    const body = { model: 'sim-embed', input: 'replay me' };
    await call('POST /v1/embeddings', '/v1/embeddings', { body, idempotencyKey });
    const replayed = await call('POST /v1/embeddings', '/v1/embeddings', { body, idempotencyKey });
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    await call('POST /v1/rerank', '/v1/rerank', {
      body: {
        model: 'sim-rerank',
        query: 'q',
        documents: ['a', { text: 'b' }],
        return_documents: true,
      },
    });
    await call('POST /v1/rerank', '/v1/rerank', { body: { model: 'sim-rerank' } });
  });

  it('responses: plain, streamed, read back', async () => {
    const made = await call('POST /v1/responses', '/v1/responses', {
      body: { model: 'sim-chat', input: 'hello', metadata: { run: 'contract' } },
    });
    const streamed = await call('POST /v1/responses', '/v1/responses', {
      body: { model: 'sim-chat', input: 'hello', stream: true },
    });
    expect(streamed.headers['content-type']).toContain('text/event-stream');
    await call('POST /v1/responses', '/v1/responses', {
      body: { model: 'sim-chat', input: 'x', tools: [{ type: 'web_search' }] },
    });
    const id = made.json<{ id: string }>().id;
    await call('GET /v1/responses/{id}', `/v1/responses/${id}`);
    await call('GET /v1/responses/{id}', '/v1/responses/resp_000000000missing');
    await call('POST /v1/responses/compact', '/v1/responses/compact', {
      body: { model: 'sim-chat', input: [{ role: 'user', content: 'hello' }] },
    });
    await call('POST /v1/responses/compact', '/v1/responses/compact', {
      body: { model: 'sim-chat', input: 'hello', stream: true },
    });
  });

  it('anthropic messages: plain, streamed, count_tokens, in their own error shape', async () => {
    const message = {
      model: 'sim-chat',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hello' }],
    };
    const headers = { 'anthropic-version': '2023-06-01' };
    await call('POST /v1/messages', '/v1/messages', { body: message, headers });
    const streamed = await call('POST /v1/messages', '/v1/messages', {
      body: { ...message, stream: true },
      headers,
    });
    expect(streamed.headers['content-type']).toContain('text/event-stream');
    await call('POST /v1/messages', '/v1/messages', {
      body: { ...message, top_k: 3 },
      headers,
    });
    const { max_tokens: _max, ...counted } = message;
    await call('POST /v1/messages/count_tokens', '/v1/messages/count_tokens', {
      body: counted,
      headers,
    });
    await call('POST /v1/messages/count_tokens', '/v1/messages/count_tokens', {
      body: { ...counted, model: 'no-such-model' },
      headers,
    });
  });

  it('records: read, look up, list, settle', async () => {
    const idempotencyKey = randomUUID();
    const embedded = await call('POST /v1/embeddings', '/v1/embeddings', {
      body: { model: 'sim-embed', input: 'record me' },
      idempotencyKey,
    });
    const id = String(embedded.headers['x-service-request-id']);
    await call('GET /v1/requests/{id}', `/v1/requests/${id}`);
    await call('GET /v1/requests/{id}', '/v1/requests/req_missing');
    await call('GET /v1/requests', `/v1/requests?idempotency_key=${idempotencyKey}`);
    await call('GET /v1/requests', '/v1/requests?limit=2');
    await call('GET /v1/requests', '/v1/requests?limit=zero');
    await call('POST /v1/requests/{id}/settle', `/v1/requests/${id}/settle`);

    // A record awaiting funds, settled after a top-up (docs/requests.md).
    const input = 'hello world [sim:extra_tokens=50]';
    const owner = await funds.account(Buffer.byteLength(input) + 8);
    const first = await funds.call('POST', '/v1/embeddings', {
      key: owner.key,
      body: { model: 'sim-embed', input },
    });
    check('POST /v1/embeddings', first);
    const waiting = String(first.headers['x-service-request-id']);
    await funds.admin('POST', `/admin/v1/accounts/${owner.accountId}/topups`, {
      amount: 1_000,
      reference: randomUUID(),
    });
    check(
      'POST /v1/requests/{id}/settle',
      await funds.call('POST', `/v1/requests/${waiting}/settle`, { key: owner.key }),
    );
    check(
      'GET /v1/requests/{id}',
      await funds.call('GET', `/v1/requests/${waiting}`, { key: owner.key }),
    );
  });

  it('image and video tasks: quote, create, read, settle, content', async () => {
    for (const [base, create, body] of [
      [
        '/v1/images',
        '/v1/images/generations',
        { model: 'sim-image', prompt: 'fox', size: '256x256' },
      ],
      [
        '/v1/videos',
        '/v1/videos',
        { model: 'sim-video', prompt: 'waves', seconds: 2, size: '320x240' },
      ],
    ] as const) {
      await call(`POST ${base}/quote`, `${base}/quote`, { body });
      await call(`POST ${base}/quote`, `${base}/quote`, { body: { prompt: 'no model' } });
      const created = await call(`POST ${create}`, create, { body });
      await call(`POST ${create}`, create, { body: { ...body, size: '999x999' } });
      const id = created.json<{ id: string }>().id;
      const task = await finishedTask(gateway, key, `${base}/${id}`);
      await call(`GET ${base}/{id}`, `${base}/${id}`);
      await call(`GET ${base}/{id}`, `${base}/task_missing`);
      await call(`POST ${base}/{id}/settle`, `${base}/${id}/settle`, {
        body: { confirmation: 'x' },
      });
      await call(`POST ${base}/{id}/settle`, `${base}/${id}/settle`, { body: settleBodyOf(task) });
    }
    const videos = (await gateway.call('GET', '/v1/assets', { key })).json<{ data: unknown[] }>();
    expect(videos.data.length).toBeGreaterThan(0);
    const [video] = (
      await gateway.services.store.db
        .selectFrom('tasks')
        .select(['id', 'kind'])
        .where('kind', '=', 'video')
        .execute()
    ).map((row) => row.id);
    await call('GET /v1/videos/{id}/content', `/v1/videos/${video}/content`);
    await call('GET /v1/videos/{id}/content', `/v1/videos/${video}/content`, {
      headers: { range: 'bytes=0-9' },
    });
    await call('GET /v1/videos/{id}/content', `/v1/videos/${video}/content`, {
      headers: { range: 'bytes=999999999-' },
    });
  });

  it('H3 tasks: quote, submit, read, settle, content', async () => {
    const input = {
      action: 'generate',
      prompt: 'waves on a pier',
      parameters: { resolution: '480p', duration: 4 },
    };
    const quote = check(
      'POST /v1/h3/tasks',
      await gateway.call('POST', '/v1/h3/tasks', {
        key,
        body: { model: 'sim-h3', ...input, operation: 'quote' },
      }),
    ).json<H3Quote>();
    await call('POST /v1/h3/tasks', '/v1/h3/tasks', {
      body: { model: 'sim-h3', operation: 'quote' },
    });
    const submitted = await call('POST /v1/h3/tasks', '/v1/h3/tasks', {
      body: submitBody(input, quote),
    });
    expect(submitted.statusCode, submitted.body).toBe(202);
    await call('POST /v1/h3/tasks', '/v1/h3/tasks', {
      body: { ...submitBody(input, quote), expected_input_digest: 'sha256:0' },
    });
    const task = await finishedH3(gateway, key, submitted.json<H3Task>().id);
    await call('GET /v1/h3/tasks/{id}', `/v1/h3/tasks/${task.id}`);
    await call('GET /v1/h3/tasks/{id}', `/v1/h3/tasks/${task.id}?refresh=maybe`);
    await call('GET /v1/h3/tasks/{id}/content', `/v1/h3/tasks/${task.id}/content`);
    await call('POST /v1/h3/tasks/{id}/settle', `/v1/h3/tasks/${task.id}/settle`, { body: {} });
    const settled = await call('POST /v1/h3/tasks/{id}/settle', `/v1/h3/tasks/${task.id}/settle`, {
      body: h3SettleBody(task),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    await call('GET /v1/h3/tasks/{id}/content', `/v1/h3/tasks/${task.id}/content`);
    await call('GET /v1/h3/tasks/{id}/content', '/v1/h3/tasks/task_missing/content');
  });

  it('assets and shares', async () => {
    const uploaded = check('POST /v1/assets', await gateway.upload(key, png(16, 16), 'image/png'));
    check('POST /v1/assets', await gateway.upload(key, Buffer.from('not an image'), 'image/png'));
    const asset = uploaded.json<{ data: { id: string } }>().data.id;
    await call('GET /v1/assets', '/v1/assets?limit=1');
    await call('GET /v1/assets', '/v1/assets?after=asset_missing');
    await call('GET /v1/assets/{id}/content', `/v1/assets/${asset}/content`);
    await call('GET /v1/assets/{id}/content', '/v1/assets/asset_missing/content');

    const shared = await call('POST /v1/shares', '/v1/shares', { body: { asset_id: asset } });
    await call('POST /v1/shares', '/v1/shares', { body: {} });
    const share = shared.json<{ id: string }>().id;
    await call('GET /v1/shares', '/v1/shares');
    await call('GET /v1/shares', '/v1/shares?limit=0');
    await call('GET /v1/shares/{id}', `/v1/shares/${share}`);
    await call('GET /v1/shares/{id}', '/v1/shares/share_missing');
    await call('DELETE /v1/shares/{id}', `/v1/shares/${share}`);
    await call('DELETE /v1/shares/{id}', '/v1/shares/share_missing');

    await call('DELETE /v1/assets/{id}', `/v1/assets/${asset}`);
    await call('DELETE /v1/assets/{id}', '/v1/assets/asset_missing');
  });

  it('refuses an answer the document does not describe (the checker itself works)', () => {
    const models = validatorFor(
      '/paths/~1v1~1models/get/responses/200/content/application~1json/schema',
    );
    expect(models({ object: 'list', data: [] })).toBe(true);
    expect(models({ object: 'list', data: [], extra: 1 })).toBe(false);
    expect(models({ object: 'list', data: [{ id: 'm' }] })).toBe(false);
    const error = validatorFor('/components/responses/Error401/content/application~1json/schema');
    expect(error({ error: { code: 'NOT_FOUND', message: 'x', request_id: 'req_1' } })).toBe(false);
  });

  it('exercised every operation of the document, to a success and to an error', () => {
    expect(checker.operations().length).toBeGreaterThanOrEqual(31);
    expect(checker.unexercised()).toEqual([]);
  });
});
