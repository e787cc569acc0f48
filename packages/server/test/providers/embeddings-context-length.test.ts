import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { recordedUpstream } from '../helpers/recorded-upstream.js';

/** OpenAI's answer to an embeddings input beyond the model's context window (its `code` is null). */
const OPENAI_OVERFLOW = {
  error: {
    message:
      "This model's maximum context length is 8192 tokens, however you requested 9000 tokens (9000 in your prompt; 0 for the completion). Please reduce your prompt; or completion length.",
    type: 'invalid_request_error',
    param: null,
    code: null,
  },
};
/**
 * Qwen's (DashScope compatible mode) answer to an input beyond the model's context window
 * (test/providers/fixtures/provider-dialect-outcomes.json): not OpenAI's words.
 */
const QWEN_OVERFLOW = {
  error: {
    message: '<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 8192]',
    type: 'invalid_request_error',
    param: null,
    code: 'invalid_parameter_error',
  },
};
/** Another invalid request: not the caller's input being too long. */
const OPENAI_OTHER = {
  error: {
    message:
      "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.",
    type: 'invalid_request_error',
    param: null,
    code: null,
  },
};

/**
 * An OpenAI-compatible embeddings upstream: an input holding "too long" is refused as OpenAI
 * refuses one beyond the model's context (as Qwen does under `/qwen/`), one holding "malformed"
 * with another 400, any other embedded. Counts what it was sent.
 */
async function fakeEmbeddings(): Promise<{
  url: string;
  qwenUrl: string;
  calls: string[][];
  close: () => Promise<void>;
}> {
  const calls: string[][] = [];
  const upstream = await recordedUpstream((path, received, response) => {
    const body = received as { input: string[]; dimensions?: number };
    calls.push(body.input);
    response.setHeader('content-type', 'application/json');
    const answer = (status: number, json: unknown) => {
      response.statusCode = status;
      response.end(JSON.stringify(json));
    };
    const overflow = path.startsWith('/qwen/') ? QWEN_OVERFLOW : OPENAI_OVERFLOW;
    if (body.input.some((input) => input.includes('too long'))) answer(400, overflow);
    else if (body.input.some((input) => input.includes('malformed'))) answer(400, OPENAI_OTHER);
    else
      answer(200, {
        object: 'list',
        data: body.input.map((_, index) => ({
          object: 'embedding',
          index,
          embedding: new Array<number>(body.dimensions ?? 8).fill(0.5),
        })),
        model: 'text-embedding-3-small',
        usage: { prompt_tokens: 3, total_tokens: 3 },
      });
  });
  return {
    url: `${upstream.url}/v1`,
    qwenUrl: `${upstream.url}/qwen/v1`,
    calls,
    close: upstream.close,
  };
}

/**
 * Risk: an embeddings input longer than the model's context window — the caller's to shorten —
 * answered as the upstream's failure (502, "try later"), in the provider's words, charged, or
 * moved to another channel (which would refuse it too, or, configured otherwise, answer where the
 * first did not). And the converse: another 400 of the provider read as the caller's input.
 */
describeEachDialect('an embeddings input beyond the context window ($name)', (dialect) => {
  let upstream: Awaited<ReturnType<typeof fakeEmbeddings>>;
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    upstream = await fakeEmbeddings();
    gateway = await startGateway(dialect, {
      config: testConfig({
        upstreams: {
          simulator: { kind: 'simulator' },
          openai: { kind: 'openai', base_url: upstream.url },
          qwen: { kind: 'openai', base_url: upstream.qwenUrl, dialect: 'qwen' },
          'sim-qwen': { kind: 'simulator', dialect: 'qwen' },
        },
        models: [
          {
            id: 'embed',
            families: ['embeddings'],
            prices: { input_per_million_tokens: 500_000 },
            default_dimensions: 8,
            // The simulator's channel would embed it: tried only were the refusal failed over.
            channels: [
              { id: 'openai', upstream: 'openai', model: 'text-embedding-3-small', priority: 1 },
              { id: 'backup', upstream: 'simulator', model: 'sim-embed', priority: 0 },
            ],
          },
          {
            id: 'qwen-embed',
            families: ['embeddings'],
            prices: { input_per_million_tokens: 500_000 },
            default_dimensions: 8,
            channels: [
              { id: 'qwen', upstream: 'qwen', model: 'text-embedding-v4', priority: 1 },
              { id: 'qwen-backup', upstream: 'simulator', model: 'sim-embed', priority: 0 },
            ],
          },
          {
            id: 'sim-qwen-embed',
            upstream: 'sim-qwen',
            upstream_model: 'sim-embed',
            families: ['embeddings'],
            prices: { input_per_million_tokens: 500_000 },
            default_dimensions: 8,
          },
          {
            id: 'sim-embed',
            upstream: 'simulator',
            families: ['embeddings'],
            prices: { input_per_million_tokens: 500_000 },
            default_dimensions: 8,
          },
        ],
      }),
    });
    ({ key, accountId } = await gateway.account(1_000_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
    await upstream.close();
  });

  const embed = (model: string, input: string | string[], idempotencyKey = randomUUID()) =>
    gateway.call('POST', '/v1/embeddings', { key, body: { model, input }, idempotencyKey });

  it('OpenAI\'s 400 "maximum context length": the caller\'s 400 naming input, failed, released, nothing charged, sent once, never failed over', async () => {
    const before = await gateway.balance(accountId);
    const sent = upstream.calls.length;
    const idempotencyKey = randomUUID();
    const input = ['short', 'a text far too long for the model'];
    const answer = await embed('embed', input, idempotencyKey);
    expect(answer.statusCode, answer.body).toBe(400);
    expect(answer.json()).toEqual({
      error: {
        code: 'INVALID_INPUT',
        param: 'input',
        message:
          "input: an input is longer than embed's context window allows (the model's provider refused it before any embedding; nothing was charged); shorten or split the longest",
        request_id: answer.headers['x-service-request-id'],
      },
    });
    // Nothing of the provider's words or figures.
    expect(answer.body).not.toMatch(/8192|9000|however you requested|reduce your prompt/i);
    expect(upstream.calls.length).toBe(sent + 1);

    const id = String(answer.headers['x-service-request-id']);
    expect((await gateway.call('GET', `/v1/requests/${id}`, { key })).json()).toMatchObject({
      status: 'failed',
      bill: null,
      reserve: { state: 'released' },
      error: { code: 'INVALID_INPUT', param: 'input' },
    });
    expect(await gateway.admin('GET', `/admin/v1/requests/${id}`)).toMatchObject({
      channel: 'openai',
      channel_attempts: [
        { channel: 'openai', outcome: 'refused', detail: 'upstream status 400: context_length' },
      ],
    });
    const replay = await embed('embed', input, idempotencyKey);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(answer.body);
    expect(upstream.calls.length).toBe(sent + 1);
    expect(await gateway.balance(accountId)).toEqual(before);
    await gateway.expectLedgerClean();
  });

  it("another 400 of the provider stays the upstream's failure (502 UPSTREAM_ERROR)", async () => {
    const before = await gateway.balance(accountId);
    const answer = await embed('embed', 'a malformed request');
    expect(answer.statusCode, answer.body).toBe(502);
    expect(answer.json()).toMatchObject({ error: { code: 'UPSTREAM_ERROR' } });
    expect(await gateway.balance(accountId)).toEqual(before);
  });

  it("the simulator's [sim:context_overflow] reads the same", async () => {
    const before = await gateway.balance(accountId);
    const answer = await embed('sim-embed', 'far too long [sim:context_overflow]');
    expect(answer.statusCode, answer.body).toBe(400);
    expect(answer.json()).toMatchObject({
      error: {
        code: 'INVALID_INPUT',
        param: 'input',
        message: expect.stringMatching(
          /^input: an input is longer than sim-embed's context window allows/,
        ) as unknown,
      },
    });
    expect(await gateway.balance(accountId)).toEqual(before);
  });

  it("a qwen upstream's 400 \"Range of input length\": read by its dialect's rule, the caller's 400 naming input, released, never failed over", async () => {
    const before = await gateway.balance(accountId);
    const sent = upstream.calls.length;
    const answer = await embed('qwen-embed', ['short', 'a text far too long for the model']);
    expect(answer.statusCode, answer.body).toBe(400);
    expect(answer.json()).toMatchObject({
      error: {
        code: 'INVALID_INPUT',
        param: 'input',
        message:
          "input: an input is longer than qwen-embed's context window allows (the model's provider refused it before any embedding; nothing was charged); shorten or split the longest",
      },
    });
    expect(answer.body).not.toMatch(/8192|Range of input length|InvalidParameter/i);
    expect(upstream.calls.length).toBe(sent + 1);
    const id = String(answer.headers['x-service-request-id']);
    expect(await gateway.admin('GET', `/admin/v1/requests/${id}`)).toMatchObject({
      status: 'failed',
      channel: 'qwen',
      channel_attempts: [
        { channel: 'qwen', outcome: 'refused', detail: 'upstream status 400: context_length' },
      ],
    });
    expect(await gateway.balance(accountId)).toEqual(before);

    // The simulator as Qwen answers the same words, read the same way.
    const simulated = await embed('sim-qwen-embed', 'far too long [sim:context_overflow]');
    expect(simulated.statusCode, simulated.body).toBe(400);
    expect(simulated.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'input' } });
    expect(await gateway.balance(accountId)).toEqual(before);
  });

  it('an input that fits is embedded and billed as before', async () => {
    const answer = await embed('embed', 'fits');
    expect(answer.statusCode, answer.body).toBe(200);
    const id = String(answer.headers['x-service-request-id']);
    expect(await gateway.admin('GET', `/admin/v1/requests/${id}`)).toMatchObject({
      status: 'succeeded',
      channel: 'openai',
    });
  });
});
