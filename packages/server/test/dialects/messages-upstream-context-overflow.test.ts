import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { upstreamPromptTooLong } from '../../src/http/dialects/messages/chat-error-paths.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const simChat = (() => {
  const base = defaultConfig.models.find((model) => model.id === 'sim-chat');
  if (base === undefined) throw new Error('no sim-chat');
  const { upstream: _single, ...rest } = base;
  return rest;
})();

/**
 * How Claude Code reads Anthropic's "prompt is too long" (its services/api/errors.ts): an error
 * whose message holds the words is compacted on, and these figures, when present, are how much
 * it drops. The gateway's answer must hold the words, and must never hold figures it does not
 * know (a false pair would make the client drop the wrong amount).
 */
const CLAUDE_CODE_FIGURES = /prompt is too long[^0-9]*(\d+)\s*tokens?\s*>\s*(\d+)/i;
/** The simulator's figures in each provider's body: never passed on. */
const PROVIDER_FIGURES = /200001|200000|131072|131073/;

/**
 * Risk: on `POST /v1/messages`, a provider's refusal of an input beyond the model's context window
 * reaches Claude Code in words it does not compact on (the gateway's generic message: the session
 * is stuck repeating the error), in the provider's own words or figures, charged, failed over, or
 * recorded otherwise than it was answered (a replay saying something else). Two upstreams refuse:
 * an Anthropic one (`chat_api: messages`: "prompt is too long: 200001 tokens > 200000 maximum")
 * and an OpenAI one (`context_length_exceeded`), both through the simulator's
 * `[sim:context_overflow]`.
 */
describeEachDialect("an upstream's context-length refusal on /v1/messages ($name)", (dialect) => {
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    gateway = await startGateway(dialect, {
      config: testConfig({
        upstreams: {
          simulator: { kind: 'simulator' },
          anthropic: { kind: 'simulator', chat_api: 'messages' },
        },
        models: [
          {
            ...simChat,
            id: 'claude-chat',
            // A second channel, which would be tried were the refusal failed over.
            channels: [
              { id: 'claude', upstream: 'anthropic', model: 'sim-chat', priority: 1 },
              { id: 'backup', upstream: 'simulator', model: 'sim-chat', priority: 0 },
            ],
          },
          { ...simChat, id: 'openai-chat', channels: [{ id: 'openai', upstream: 'simulator' }] },
        ],
      }),
    });
    ({ key, accountId } = await gateway.account(1_000_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  for (const [model, channel] of [
    ['claude-chat', 'claude'],
    ['openai-chat', 'openai'],
  ] as const)
    it(`${model}: plain and streamed, Anthropic's 400 "prompt is too long", sized by count_tokens' estimate; failed, released, nothing charged, not failed over, replayed the same`, async () => {
      const before = await gateway.balance(accountId);
      const messages = [
        { role: 'user', content: 'a long history' },
        { role: 'assistant', content: 'noted' },
        { role: 'user', content: 'and far too much more [sim:context_overflow]' },
      ];
      const counted = await gateway.call('POST', '/v1/messages/count_tokens', {
        key,
        body: { model, messages },
        idempotencyKey: null,
      });
      expect(counted.statusCode, counted.body).toBe(200);
      const { input_tokens: estimate } = counted.json<{ input_tokens: number }>();
      expect(estimate).toBeGreaterThan(0);

      for (const stream of [false, true]) {
        const idempotencyKey = randomUUID();
        const body = { model, max_tokens: 64, messages, stream };
        const answer = await gateway.call('POST', '/v1/messages', { key, body, idempotencyKey });
        expect(answer.statusCode, answer.body).toBe(400);
        // Refused before any stream began: JSON, in Anthropic's shape.
        expect(String(answer.headers['content-type'])).toContain('application/json');
        expect(answer.headers['x-should-retry']).toBe('false');
        const error = answer.json<{
          type: string;
          error: { type: string; message: string };
          request_id: string;
        }>();
        expect(error).toEqual({
          type: 'error',
          error: { type: 'invalid_request_error', message: expect.any(String) as unknown },
          request_id: answer.headers['x-service-request-id'],
        });
        const { message } = error.error;
        expect(message).toBe(
          `prompt is too long: the input is longer than ${model}'s context window allows ` +
            `(about ${estimate} tokens by the gateway's estimate; the model's provider refused it ` +
            `before any output, nothing was charged); shorten it or ask for fewer output tokens`,
        );
        // What Claude Code matches on, and no pair of figures the gateway does not know.
        expect(message.toLowerCase()).toContain('prompt is too long');
        expect(CLAUDE_CODE_FIGURES.test(message)).toBe(false);
        expect(answer.body).not.toMatch(PROVIDER_FIGURES);

        // The record says what the caller was answered: failed, released, no bill, one channel.
        const id = String(answer.headers['x-service-request-id']);
        expect((await gateway.call('GET', `/v1/requests/${id}`, { key })).json()).toMatchObject({
          status: 'failed',
          bill: null,
          reserve: { state: 'released' },
          error: { code: 'INVALID_INPUT', param: 'messages', message },
        });
        expect(await gateway.admin('GET', `/admin/v1/requests/${id}`)).toMatchObject({
          channel,
          channel_attempts: [
            { channel, outcome: 'refused', detail: 'upstream status 400: context_length' },
          ],
        });
        // A replay by its key answers the same words.
        const replay = await gateway.call('POST', '/v1/messages', { key, body, idempotencyKey });
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.statusCode).toBe(400);
        expect(replay.body).toBe(answer.body);
      }
      expect(await gateway.balance(accountId)).toEqual(before);
      await gateway.expectLedgerClean();
    });

  it('/v1/chat/completions keeps the generic words, naming messages', async () => {
    const prompt = 'far too long [sim:context_overflow]';
    const chat = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: { model: 'claude-chat', messages: [{ role: 'user', content: prompt }] },
    });
    expect(chat.statusCode, chat.body).toBe(400);
    expect(chat.json()).toMatchObject({
      error: {
        code: 'INVALID_INPUT',
        param: 'messages',
        message: expect.stringMatching(
          /^messages: the input is longer than claude-chat's context window allows/,
        ) as unknown,
      },
    });
  });

  it("another 400 from the provider stays the upstream's failure, in Anthropic's shape", async () => {
    const answer = await gateway.call('POST', '/v1/messages', {
      key,
      body: {
        model: 'claude-chat',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'refused [sim:fail=400]' }],
      },
    });
    expect(answer.statusCode, answer.body).toBe(502);
    expect(answer.json()).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    expect(answer.body).not.toContain('prompt is too long');
  });
});

describe("upstreamPromptTooLong: Anthropic's words for a provider's refusal", () => {
  it('without an estimate it still starts "prompt is too long", and names the model', () => {
    const error = upstreamPromptTooLong('gpt-4o-2024-08-06', undefined);
    expect(error).toMatchObject({ status: 400, code: 'INVALID_INPUT', param: 'messages' });
    expect(error.message).toBe(
      "prompt is too long: the input is longer than gpt-4o-2024-08-06's context window allows " +
        "(the model's provider refused it before any output, nothing was charged); shorten it " +
        'or ask for fewer output tokens',
    );
  });

  it("never reads as Anthropic's figures, whatever digits the model id and the estimate hold", () => {
    for (const model of ['m', 'qwen3-235b-a22b', 'claude-3-5-sonnet-20241022', 'x-1', '200000'])
      for (const estimate of [undefined, 0, 7, 200_001]) {
        const { message } = upstreamPromptTooLong(model, estimate);
        expect(message.startsWith('prompt is too long: ')).toBe(true);
        expect(CLAUDE_CODE_FIGURES.test(message), message).toBe(false);
      }
  });
});
