import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chatCost } from '../../src/chat/chat-pricing.js';
import { readOpaqueToken } from '../../src/chat/opaque-parts.js';
import { defaultConfig } from '../../src/config/default-config.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const simChat = (() => {
  const base = defaultConfig.models.find((model) => model.id === 'sim-chat');
  if (base === undefined) throw new Error('no sim-chat');
  const { upstream: _single, ...rest } = base;
  return rest;
})();
const prices = simChat.prices as {
  input_per_million_tokens: number;
  output_per_million_tokens: number;
  cached_input_per_million_tokens: number;
};

/** The data of each SSE frame (`[DONE]` left out). */
function framesOf(response: LightMyRequestResponse): Record<string, unknown>[] {
  return response.body
    .split('\n\n')
    .flatMap((block) => block.split('\n').filter((line) => line.startsWith('data: ')))
    .map((line) => line.slice('data: '.length))
    .filter((data) => data !== '[DONE]')
    .map((data) => JSON.parse(data) as Record<string, unknown>);
}

/**
 * Risk: a model served by an Anthropic Messages upstream answers wrongly or bills wrongly through
 * one of the three inbound protocols — a translation that loses the text, the tool loop or the
 * stream's usage, a bill that is not the model's price of what Anthropic reported, thinking that
 * cannot go back (the next turn refused), or an `anthropic-beta` changed on its way. Every model
 * call goes to the simulator's `POST /v1/messages` (`chat_api: "messages"`); the ledger stays clean.
 */
describeEachDialect('a model whose channel is an Anthropic upstream ($name)', (dialect) => {
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
          { ...simChat, channels: [{ id: 'claude', upstream: 'anthropic', model: 'sim-chat' }] },
        ],
      }),
    });
    ({ key, accountId } = await gateway.account(1_000_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const call = (
    path: string,
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
  ) => gateway.call('POST', path, { key, body, headers, idempotencyKey: randomUUID() });

  /** The record of a response, checked to be billed exactly the model's price of its usage. */
  async function expectBilledExactly(response: LightMyRequestResponse) {
    expect(response.statusCode, response.body).toBe(200);
    const id = String(response.headers['x-service-request-id']);
    const record = await gateway.admin('GET', `/admin/v1/requests/${id}`);
    const usage = record['usage'] as Record<string, number>;
    expect(record).toMatchObject({ status: 'succeeded', channel: 'claude' });
    // Only the Anthropic adapter reports cache writes: the call went to /v1/messages.
    expect(usage['cache_write_tokens']).toBe(0);
    expect(usage['prompt_tokens']).toBeGreaterThan(0);
    const expected = chatCost(
      {
        promptTokens: usage['prompt_tokens'] ?? 0,
        completionTokens: usage['completion_tokens'] ?? 0,
        cachedTokens: usage['cached_tokens'] ?? 0,
        reasoningTokens: usage['reasoning_tokens'] ?? 0,
      },
      prices,
    ).amount;
    expect((record['bill'] as { amount: number }).amount).toBe(expected);
    expect(expected).toBe(
      (usage['prompt_tokens'] ?? 0) * 2 + (usage['completion_tokens'] ?? 0) * 8,
    );
    return { record, usage };
  }

  it('/v1/chat/completions: plain and streamed answers, billed on the usage Anthropic reported', async () => {
    const messages = [{ role: 'user', content: 'hello from chat' }];
    const plain = await call('/v1/chat/completions', {
      model: 'sim-chat',
      messages,
      max_tokens: 64,
    });
    const { usage } = await expectBilledExactly(plain);
    expect(plain.json()).toMatchObject({
      choices: [
        { message: { content: 'Simulated reply to: hello from chat' }, finish_reason: 'stop' },
      ],
      usage: {
        prompt_tokens: usage['prompt_tokens'],
        completion_tokens: usage['completion_tokens'],
      },
    });

    const streamed = await call('/v1/chat/completions', {
      model: 'sim-chat',
      messages,
      max_tokens: 64,
      stream: true,
      stream_options: { include_usage: true },
    });
    const { usage: streamedUsage } = await expectBilledExactly(streamed);
    const frames = framesOf(streamed);
    const text = frames
      .map(
        (frame) =>
          (frame['choices'] as { delta?: { content?: string } }[])[0]?.delta?.content ?? '',
      )
      .join('');
    expect(text).toBe('Simulated reply to: hello from chat');
    expect(frames.at(-1)?.['usage']).toMatchObject({
      prompt_tokens: streamedUsage['prompt_tokens'],
    });
    expect(streamedUsage).toEqual(usage);
  });

  it('/v1/chat/completions: a tool loop', async () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'lookup',
          parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
        },
      },
    ];
    const ask = { role: 'user', content: 'use the lookup tool' };
    const first = await call('/v1/chat/completions', { model: 'sim-chat', messages: [ask], tools });
    await expectBilledExactly(first);
    const message = first.json<{ choices: { message: { tool_calls: { id: string }[] } }[] }>()
      .choices[0]?.message;
    const callId = message?.tool_calls[0]?.id;
    expect(callId).toMatch(/^toolu_/);
    const second = await call('/v1/chat/completions', {
      model: 'sim-chat',
      tools,
      messages: [ask, message, { role: 'tool', tool_call_id: callId, content: 'found it' }],
    });
    await expectBilledExactly(second);
    expect(
      second.json<{ choices: { message: { content: string } }[] }>().choices[0]?.message.content,
    ).toContain('found it');
  });

  it('/v1/responses: plain and streamed answers', async () => {
    const plain = await call('/v1/responses', { model: 'sim-chat', input: 'hello from responses' });
    await expectBilledExactly(plain);
    expect(plain.json()).toMatchObject({
      status: 'completed',
      output: [
        { type: 'message', content: [{ text: 'Simulated reply to: hello from responses' }] },
      ],
    });
    const streamed = await call('/v1/responses', {
      model: 'sim-chat',
      input: 'hello from responses',
      stream: true,
    });
    await expectBilledExactly(streamed);
    expect(framesOf(streamed).at(-1)).toMatchObject({ type: 'response.completed' });
  });

  it('/v1/messages: plain and streamed answers', async () => {
    const body = {
      model: 'sim-chat',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hello from messages' }],
    };
    const plain = await call('/v1/messages', body);
    await expectBilledExactly(plain);
    expect(plain.json()).toMatchObject({
      type: 'message',
      content: [{ type: 'text', text: 'Simulated reply to: hello from messages' }],
      stop_reason: 'end_turn',
    });
    const streamed = await call('/v1/messages', { ...body, stream: true });
    await expectBilledExactly(streamed);
    expect(framesOf(streamed).at(-1)).toMatchObject({ type: 'message_stop' });
  });

  it('a field Anthropic cannot honour is a plain 400 naming it, nothing held or charged', async () => {
    const before = await gateway.balance(accountId);
    const refused = await call('/v1/chat/completions', {
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'hi' }],
      presence_penalty: 0.5,
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({
      error: { code: 'INVALID_INPUT', param: 'presence_penalty' },
    });
    expect(await gateway.balance(accountId)).toEqual(before);
  });

  it('stream endings: an error event before any output releases the hold; after some, keeps it', async () => {
    const stream = (content: string) =>
      call('/v1/chat/completions', {
        model: 'sim-chat',
        stream: true,
        max_tokens: 64,
        messages: [{ role: 'user', content }],
      });
    const recordOf = (response: LightMyRequestResponse) =>
      gateway.admin(
        'GET',
        `/admin/v1/requests/${String(response.headers['x-service-request-id'])}`,
      );
    // Event 1 is message_start: nothing shown yet.
    const early = await stream('one two three four five [sim:error_after=1]');
    expect(await recordOf(early)).toMatchObject({ status: 'failed' });
    const late = await stream('one two three four five [sim:error_after=6]');
    expect(await recordOf(late)).toMatchObject({ status: 'submission_unknown' });
  });

  // Depends on the inbound Messages dialect decoding `tgo1.` signatures into opaque parts
  // (http/dialects/messages/, being changed separately).
  it('[needs the Messages dialect change] thinking goes back unchanged: accepted; altered, refused', async () => {
    const question = { role: 'user', content: 'think first' };
    const turn = (messages: unknown[]) =>
      call('/v1/messages', {
        model: 'sim-chat',
        max_tokens: 3_000,
        thinking: { type: 'enabled', budget_tokens: 1_024 },
        messages,
      });
    const first = await turn([question]);
    await expectBilledExactly(first);
    const content = first.json<{ content: Record<string, string>[] }>().content;
    const thinking = content[0];
    expect(thinking?.['type']).toBe('thinking');
    expect(thinking?.['signature']?.startsWith('tgo1.')).toBe(true);
    const next = { role: 'user', content: 'and then?' };
    const second = await turn([question, { role: 'assistant', content }, next]);
    await expectBilledExactly(second);

    // The same token with its sealed text altered: the simulator checks the original signature.
    const part = readOpaqueToken(thinking?.['signature'] ?? '');
    expect(part?.channel).toBe('claude');
    const forged = `tgo1.${Buffer.from(
      JSON.stringify({
        c: part?.channel,
        k: part?.kind,
        p: { ...part?.payload, thinking: 'edited' },
      }),
    ).toString('base64url')}`;
    const before = await gateway.balance(accountId);
    const altered = await turn([
      question,
      {
        role: 'assistant',
        content: [{ ...thinking, thinking: 'edited', signature: forged }, ...content.slice(1)],
      },
      next,
    ]);
    // Refused by the upstream (its 400 is the gateway's 502 UPSTREAM_ERROR), nothing charged.
    expect(altered.statusCode, altered.body).toBe(502);
    const record = await gateway.admin(
      'GET',
      `/admin/v1/requests/${String(altered.headers['x-service-request-id'])}`,
    );
    expect(record).toMatchObject({ status: 'failed', channel: 'claude' });
    expect(await gateway.balance(accountId)).toEqual(before);
  });

  // Depends on the inbound Messages dialect passing `anthropic-beta` through ChatTurnInput.
  it('[needs the Messages dialect change] anthropic-beta reaches the Anthropic upstream verbatim', async () => {
    const body = {
      model: 'sim-chat',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'beta' }],
    };
    const known = await call('/v1/messages', body, {
      'anthropic-beta': 'interleaved-thinking-2025-05-14',
    });
    await expectBilledExactly(known);
    expect(String(known.headers['x-tollgate-dropped-fields'] ?? '')).not.toContain(
      'anthropic-beta',
    );
    // The simulator refuses a beta Anthropic does not know: proof the header went upstream.
    const unknown = await call('/v1/messages', body, {
      'anthropic-beta': 'no-such-beta-2099-01-01',
    });
    expect(unknown.statusCode).toBe(502);
  });
  it("an input beyond the model's context window (Anthropic's 400 \"prompt is too long\"): the caller's own 400 from every inbound protocol, plain and streamed; failed, released, nothing charged", async () => {
    const before = await gateway.balance(accountId);
    const prompt = 'a question far too long [sim:context_overflow]';
    const cases = [
      {
        path: '/v1/chat/completions',
        body: { model: 'sim-chat', messages: [{ role: 'user', content: prompt }] },
        param: 'messages',
      },
      { path: '/v1/responses', body: { model: 'sim-chat', input: prompt }, param: 'input' },
      {
        path: '/v1/messages',
        body: { model: 'sim-chat', max_tokens: 64, messages: [{ role: 'user', content: prompt }] },
        param: undefined,
      },
    ];
    for (const { path, body, param } of cases)
      for (const stream of [false, true]) {
        const answer = await call(path, { ...body, stream });
        expect(answer.statusCode, answer.body).toBe(400);
        // Refused before the stream began: answered as JSON, in the caller's protocol.
        expect(String(answer.headers['content-type'])).toContain('application/json');
        expect(answer.body).not.toContain('200001 tokens');
        if (param === undefined)
          expect(answer.json()).toMatchObject({
            type: 'error',
            error: {
              type: 'invalid_request_error',
              message: expect.stringContaining(
                "the input is longer than sim-chat's context window allows",
              ) as unknown,
            },
          });
        else
          expect(answer.json()).toMatchObject({
            error: {
              code: 'INVALID_INPUT',
              param,
              message: expect.stringMatching(
                new RegExp(`^${param}: the input is longer than sim-chat's context window allows`),
              ) as unknown,
            },
          });
        const id = String(answer.headers['x-service-request-id']);
        expect(await gateway.admin('GET', `/admin/v1/requests/${id}`)).toMatchObject({
          status: 'failed',
          bill: null,
          channel: 'claude',
          channel_attempts: [
            {
              channel: 'claude',
              outcome: 'refused',
              detail: 'upstream status 400: context_length',
            },
          ],
        });
      }
    expect(await gateway.balance(accountId)).toEqual(before);
  });

  it('another 400 from Anthropic (not its context-length error) stays the upstream refusal it was', async () => {
    const answer = await call('/v1/chat/completions', {
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'refused [sim:fail=400]' }],
    });
    expect(answer.statusCode, answer.body).toBe(502);
    expect(answer.json()).toMatchObject({ error: { code: 'UPSTREAM_ERROR' } });
  });
});
