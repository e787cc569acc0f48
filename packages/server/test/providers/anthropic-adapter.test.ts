import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upstreamSchema } from '../../src/config/schema.js';
import {
  readOpaqueToken,
  type OpaqueOutput,
  type PlacedOpaquePart,
} from '../../src/chat/opaque-parts.js';
import type { ChatCallOptions, StreamEvent } from '../../src/providers/chat-upstream.js';
import { MessagesChat } from '../../src/providers/anthropic/messages-chat.js';
import { readMessagesAnswer } from '../../src/providers/anthropic/messages-answer.js';
import { toMessagesRequest } from '../../src/providers/anthropic/messages-request.js';
import { MessagesStreamReader } from '../../src/providers/anthropic/messages-stream.js';
import { UpstreamFailure } from '../../src/providers/upstream-error.js';
import { UpstreamHttp, type UpstreamClient } from '../../src/providers/upstream-http.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';

/**
 * Risk: an Anthropic channel bills, shows or sends back the wrong thing — usage read without its
 * cache reads and writes (under- or over-billing), thinking blocks altered or lost between turns
 * (the next turn refused), a field Anthropic cannot honour silently dropped (a different answer
 * billed as asked) or sent (an upstream 400 after the hold), an `anthropic-beta` changed on the
 * way. Against the real simulator (`chat_api: "messages"`) through an UpstreamHttp pool, with
 * every request body and header recorded; what the simulator never sends (cache usage, redacted
 * thinking, malformed events) is fed to the readers directly.
 */

let simulator: Simulator;
let pool: UpstreamHttp;
const sent: { path: string; body: Record<string, unknown>; headers: unknown }[] = [];

beforeAll(async () => {
  simulator = await startSimulator();
  const config = upstreamSchema.parse({ kind: 'simulator', chat_api: 'messages' });
  pool = new UpstreamHttp(`${simulator.url}/v1`, config, 'sk-ant-test-organisation');
});
afterAll(async () => {
  await pool.close();
  await simulator.close();
});

function adapter(): MessagesChat {
  const http = pool.for({ accountId: 'account-1' });
  const recording: UpstreamClient = {
    ...http,
    postJson: (path, body, signal, headers) => {
      sent.push({ path, body: body as Record<string, unknown>, headers });
      return http.postJson(path, body, signal, headers);
    },
    postStream: (path, body, signal, headers) => {
      sent.push({ path, body: body as Record<string, unknown>, headers });
      return http.postStream(path, body, signal, headers);
    },
  };
  return new MessagesChat(recording);
}

const options = (overrides: Partial<ChatCallOptions> = {}): ChatCallOptions => ({
  channel: 'claude',
  opaque: [],
  maxOutputTokens: 3_000,
  ...overrides,
});

async function collect(events: AsyncGenerator<StreamEvent>): Promise<StreamEvent[]> {
  const all: StreamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

function placed(output: OpaqueOutput, messageIndex: number): PlacedOpaquePart {
  const part = readOpaqueToken(output.token);
  if (part === undefined) throw new Error('not a token');
  return { ...part, messageIndex, path: `messages.${messageIndex}.content.0` };
}

describe('Anthropic upstream adapter against the simulator', () => {
  it('answers a plain turn with the usage Anthropic reported, sending version and max_tokens', async () => {
    const answer = await adapter().complete(
      {
        model: 'sim-chat',
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hello there' },
        ],
        max_tokens: 50,
      },
      options({ maxOutputTokens: 50 }),
    );
    expect(answer.completion.choices[0]?.message.content).toBe('Simulated reply to: hello there');
    expect(answer.completion.choices[0]?.finish_reason).toBe('stop');
    expect(answer.usage).toMatchObject({
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    });
    expect(answer.usage.promptTokens).toBeGreaterThan(0);
    expect(answer.usage.completionTokens).toBeGreaterThan(0);
    const last = sent.at(-1);
    expect(last?.path).toBe('/messages');
    expect(last?.headers).toEqual({ 'anthropic-version': '2023-06-01' });
    expect(last?.body).toEqual({
      model: 'sim-chat',
      max_tokens: 50,
      system: [{ type: 'text', text: 'be brief' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
    });
  });

  it('sends a thinking block back unchanged: the next turn is accepted; its text altered, refused', async () => {
    const question = { role: 'user', content: 'think about it' };
    const first = await adapter().complete(
      { model: 'sim-chat', messages: [question], reasoning_effort: 'low' },
      options(),
    );
    expect(sent.at(-1)?.body['thinking']).toEqual({ type: 'enabled', budget_tokens: 1_024 });
    const thinking = first.opaque?.[0];
    expect(thinking?.kind).toBe('anthropic_thinking');
    expect(thinking?.token.startsWith('tgo1.')).toBe(true);
    expect(thinking?.text).toBe(first.completion.choices[0]?.message.reasoning_content);
    if (thinking === undefined) return;
    const history = [
      question,
      { role: 'assistant', content: first.completion.choices[0]?.message.content },
      { role: 'user', content: 'and then?' },
    ];
    const second = await adapter().complete(
      { model: 'sim-chat', messages: history, reasoning_effort: 'low' },
      options({ opaque: [placed(thinking, 1)] }),
    );
    expect(second.completion.choices[0]?.message.content).toContain('and then?');
    const sentBack = (sent.at(-1)?.body['messages'] as { content: unknown[] }[])[1];
    expect(sentBack?.content[0]).toEqual(readOpaqueToken(thinking.token)?.payload);

    const part = placed(thinking, 1);
    const altered = { ...part, payload: { ...part.payload, thinking: 'something else' } };
    const refused = await adapter()
      .complete(
        { model: 'sim-chat', messages: history, reasoning_effort: 'low' },
        options({ opaque: [altered] }),
      )
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UpstreamFailure);
    expect(refused).toMatchObject({ certainty: 'failed', upstreamStatus: 400 });
  });

  it('streams text, thinking sealed at its block stop, and the usage chunk before done', async () => {
    const opened = await adapter().stream(
      {
        model: 'sim-chat',
        messages: [{ role: 'user', content: 'stream me' }],
        reasoning_effort: 'low',
      },
      new AbortController().signal,
      options(),
    );
    const events = await collect(opened.events);
    const chunks = events.flatMap((event) => (event.kind === 'chunk' ? [event] : []));
    const content = chunks.map((event) => event.chunk.choices[0]?.delta.content ?? '').join('');
    const reasoning = chunks
      .map((event) => event.chunk.choices[0]?.delta.reasoning_content ?? '')
      .join('');
    expect(content).toBe('Simulated reply to: stream me');
    expect(reasoning).not.toBe('');
    const sealed = chunks.find((event) => event.opaque !== undefined)?.opaque?.[0];
    expect(sealed).toMatchObject({ kind: 'anthropic_thinking', text: reasoning });
    expect(readOpaqueToken(sealed?.token ?? '')?.payload).toMatchObject({
      type: 'thinking',
      thinking: reasoning,
    });
    expect(chunks.some((event) => event.chunk.choices[0]?.finish_reason === 'stop')).toBe(true);
    const usage = chunks.at(-1);
    expect(usage?.chunk.choices).toEqual([]);
    expect(usage?.usage).toMatchObject({ cachedTokens: 0, cacheWriteTokens: 0 });
    expect(usage?.chunk.usage?.completion_tokens).toBe(usage?.usage?.completionTokens);
    expect(events.at(-1)).toEqual({ kind: 'done' });
    expect(sent.at(-1)?.body['stream']).toBe(true);
  });

  it('runs a tool loop: tool_use as a tool call, results back as tool_result blocks', async () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'weather by city',
          parameters: {
            type: 'object',
            properties: { city: { type: 'string' } },
            required: ['city'],
          },
        },
      },
    ];
    const ask = { role: 'user', content: 'call get_weather for Paris' };
    const first = await adapter().complete(
      {
        model: 'sim-chat',
        messages: [ask],
        tools,
        tool_choice: 'required',
        parallel_tool_calls: false,
      },
      options(),
    );
    expect(sent.at(-1)?.body['tool_choice']).toEqual({
      type: 'any',
      disable_parallel_tool_use: true,
    });
    const call = first.completion.choices[0]?.message.tool_calls?.[0];
    expect(first.completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.id).toMatch(/^toolu_/);
    expect(JSON.parse(call?.function.arguments ?? '')).toHaveProperty('city');
    const second = await adapter().complete(
      {
        model: 'sim-chat',
        tools,
        messages: [
          ask,
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: call?.id, content: 'sunny, 21 C' },
          { role: 'user', content: 'thanks' },
        ],
      },
      options(),
    );
    expect(second.completion.choices[0]?.message.content).toContain('sunny, 21 C');
    expect((sent.at(-1)?.body['messages'] as unknown[]).slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          {
            type: 'tool_use',
            id: call?.id,
            name: 'get_weather',
            input: JSON.parse(call?.function.arguments ?? ''),
          },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: call?.id, content: 'sunny, 21 C' },
          { type: 'text', text: 'thanks' },
        ],
      },
    ]);
  });

  it('sends anthropic-beta verbatim: a known one is accepted, an unknown one refused upstream', async () => {
    const body = { model: 'sim-chat', messages: [{ role: 'user', content: 'beta' }] };
    const beta = 'interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14';
    await adapter().complete(body, options({ anthropicBeta: beta }));
    expect(sent.at(-1)?.headers).toEqual({
      'anthropic-version': '2023-06-01',
      'anthropic-beta': beta,
    });
    const refused = await adapter()
      .complete(body, options({ anthropicBeta: 'no-such-beta-2099-01-01' }))
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ certainty: 'failed', upstreamStatus: 400 });
  });

  it('an upstream error event mid-stream ends it as upstream_error', async () => {
    const opened = await adapter().stream(
      { model: 'sim-chat', messages: [{ role: 'user', content: 'fail [sim:error_after=3]' }] },
      new AbortController().signal,
      options(),
    );
    expect((await collect(opened.events)).at(-1)).toEqual({ kind: 'upstream_error' });
  });

  it('an answer without usage is unverifiable: outcome unknown, hold kept', async () => {
    const failure = await adapter()
      .complete(
        { model: 'sim-chat', messages: [{ role: 'user', content: 'x [sim:no_usage]' }] },
        options(),
      )
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ certainty: 'unknown' });
  });
});

describe('Anthropic request translation refuses before sending what it cannot honour', () => {
  const chat = (fields: Record<string, unknown>) => ({
    model: 'sim-chat',
    messages: [{ role: 'user', content: 'hi' }],
    ...fields,
  });
  const refusal = (fields: Record<string, unknown>, opaque: PlacedOpaquePart[] = []) => {
    try {
      toMessagesRequest(chat(fields), options({ opaque }), false);
    } catch (error) {
      if (!(error instanceof UpstreamFailure)) throw error;
      return {
        certainty: error.certainty,
        origin: error.origin,
        status: error.upstreamStatus,
        code: error.apiError.code,
        param: error.apiError.param,
      };
    }
    return undefined;
  };

  it.each([
    [{ temperature: 1.5 }, 'temperature'],
    [{ temperature: 0.5, reasoning_effort: 'low' }, 'temperature'],
    [{ presence_penalty: 0.5 }, 'presence_penalty'],
    [{ frequency_penalty: -1 }, 'frequency_penalty'],
    [{ logprobs: true }, 'logprobs'],
    [{ top_logprobs: 2 }, 'top_logprobs'],
    [{ logit_bias: { '12': 5 } }, 'logit_bias'],
    [{ response_format: { type: 'json_object' } }, 'response_format.type'],
    [{ something_new: 1 }, 'something_new'],
    [
      {
        messages: [
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '[1]' } }],
          },
        ],
      },
      'messages.1.tool_calls.0.function.arguments',
    ],
    [
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'video_url', video_url: { url: 'https://x.test/v.mp4' } }],
          },
        ],
      },
      'messages.0.content.0.type',
    ],
  ])('%j is a 400 naming %s, not processed, no upstream status', (fields, param) => {
    expect(refusal(fields)).toEqual({
      certainty: 'failed',
      origin: 'gateway',
      status: null,
      code: 'INVALID_INPUT',
      param,
    });
  });

  it('refuses opaque state of another protocol by its path', () => {
    const part: PlacedOpaquePart = {
      channel: 'claude',
      kind: 'responses_reasoning',
      payload: { type: 'reasoning', encrypted_content: 'x' },
      messageIndex: 0,
      path: 'input.0.encrypted_content',
    };
    expect(refusal({}, [part])).toMatchObject({ param: 'input.0.encrypted_content' });
  });

  it('translates the fields Anthropic has, and drops the harmless ones', () => {
    const { body } = toMessagesRequest(
      chat({
        messages: [
          { role: 'developer', content: [{ type: 'text', text: 'rules' }] },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              { type: 'image_url', image_url: { url: 'https://img.test/a.jpg', detail: 'low' } },
            ],
          },
          { role: 'system', content: 'later rule' },
        ],
        stop: 'END',
        temperature: 0.2,
        top_p: 0.9,
        user: 'user-7',
        seed: 3,
        n: 1,
        store: true,
        metadata: { a: 'b' },
        prompt_cache_key: 'k',
        service_tier: 'auto',
        verbosity: 'low',
        presence_penalty: 0,
        logprobs: false,
        max_completion_tokens: 20,
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'x', schema: { type: 'object' } },
        },
        tools: [
          { type: 'function', function: { name: 'a' } },
          { type: 'function', function: { name: 'b', parameters: { type: 'object' } } },
        ],
        tool_choice: {
          type: 'allowed_tools',
          allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'b' } }] },
        },
      }),
      options({ maxOutputTokens: 20 }),
      false,
    );
    expect(body).toEqual({
      model: 'sim-chat',
      max_tokens: 20,
      system: [{ type: 'text', text: 'rules' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            {
              type: 'image',
              source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
            },
            { type: 'image', source: { type: 'url', url: 'https://img.test/a.jpg' } },
            { type: 'text', text: 'later rule' },
          ],
        },
      ],
      tools: [{ name: 'b', input_schema: { type: 'object' } }],
      tool_choice: { type: 'auto' },
      stop_sequences: ['END'],
      temperature: 0.2,
      top_p: 0.9,
      metadata: { user_id: 'user-7' },
      output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
    });
  });

  it('maps reasoning effort to a budget below max_tokens, and none with no room', () => {
    const thinking = (fields: Record<string, unknown>, max: number) =>
      toMessagesRequest(chat(fields), options({ maxOutputTokens: max }), false).body['thinking'];
    expect(thinking({ reasoning_effort: 'medium' }, 8_000)).toEqual({
      type: 'enabled',
      budget_tokens: 4_096,
    });
    expect(thinking({ reasoning_effort: 'high' }, 8_000)).toEqual({
      type: 'enabled',
      budget_tokens: 7_999,
    });
    expect(thinking({ reasoning_effort: 'minimal' }, 8_000)).toBeUndefined();
    expect(thinking({ reasoning_effort: 'low' }, 1_024)).toBeUndefined();
    expect(thinking({ thinking: { type: 'enabled', budget_tokens: 2_000 } }, 8_000)).toEqual({
      type: 'enabled',
      budget_tokens: 2_000,
    });
    expect(
      thinking({ thinking: { type: 'disabled' }, reasoning_effort: 'high' }, 8_000),
    ).toBeUndefined();
  });
});

describe('Anthropic usage and stream reading', () => {
  it('bills cache reads as cached input and cache writes as input, all in the prompt', () => {
    const answer = readMessagesAnswer(
      {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'redacted_thinking', data: 'opaque-bytes' },
          { type: 'text', text: 'hi' },
        ],
        stop_reason: 'end_turn',
        usage: {
          input_tokens: 10,
          cache_read_input_tokens: 300,
          cache_creation_input_tokens: 50,
          output_tokens: 7,
        },
      },
      'claude',
      'req-1',
    );
    expect(answer.usage).toEqual({
      promptTokens: 360,
      cachedTokens: 300,
      cacheWriteTokens: 50,
      completionTokens: 7,
      reasoningTokens: 0,
    });
    expect(answer.opaque).toEqual([
      expect.objectContaining({ kind: 'anthropic_redacted_thinking', text: '' }),
    ]);
    expect(readOpaqueToken(answer.opaque?.[0]?.token ?? '')).toEqual({
      channel: 'claude',
      kind: 'anthropic_redacted_thinking',
      payload: { type: 'redacted_thinking', data: 'opaque-bytes' },
    });
  });

  it.each([
    ['a server tool block', { type: 'server_tool_use', id: 's', name: 'web_search', input: {} }],
    ['a usage count below zero', { type: 'text', text: 'x' }, -1],
  ])('refuses %s as unverifiable', (_name, block, input = 1) => {
    expect(() =>
      readMessagesAnswer(
        {
          type: 'message',
          role: 'assistant',
          content: [block],
          stop_reason: 'end_turn',
          usage: { input_tokens: input, output_tokens: 1 },
        },
        'claude',
        null,
      ),
    ).toThrow(expect.objectContaining({ certainty: 'unknown' }) as Error);
  });

  it('takes the latest usage figures and keeps cache writes for the relay', () => {
    const reader = new MessagesStreamReader('claude');
    const events = [
      reader.read({
        type: 'message_start',
        message: {
          type: 'message',
          role: 'assistant',
          usage: {
            input_tokens: 5,
            output_tokens: 1,
            cache_read_input_tokens: 100,
            cache_creation_input_tokens: 20,
          },
        },
      }),
      reader.read({
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: 'toolu_1', name: 'f' },
      }),
      reader.read({ type: 'content_block_stop', index: 0 }),
      reader.read({
        type: 'message_delta',
        delta: { stop_reason: 'tool_use' },
        usage: { output_tokens: 9, input_tokens: 6 },
      }),
      reader.read({ type: 'message_stop' }),
    ].flat();
    expect(
      events.map((event) => (event.kind === 'chunk' ? event.chunk.choices[0]?.delta : event.kind)),
    ).toEqual([
      {
        role: 'assistant',
        tool_calls: [
          { index: 0, id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '' } },
        ],
      },
      { tool_calls: [{ index: 0, function: { arguments: '{}' } }] },
      {},
      undefined,
      'done',
    ]);
    const usage = events[3];
    expect(usage?.kind === 'chunk' ? usage.usage : undefined).toEqual({
      promptTokens: 126,
      cachedTokens: 100,
      cacheWriteTokens: 20,
      completionTokens: 9,
      reasoningTokens: 0,
    });
  });

  it('a delta for a block of another kind, or tool input that is not an object, is invalid', () => {
    const reader = new MessagesStreamReader('claude');
    reader.read({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    });
    expect(
      reader.read({
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '{' },
      }),
    ).toEqual([expect.objectContaining({ kind: 'invalid' })]);
    const tools = new MessagesStreamReader('claude');
    tools.read({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 't', name: 'f' },
    });
    tools.read({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: '[1]' },
    });
    expect(tools.read({ type: 'content_block_stop', index: 0 })).toEqual([
      expect.objectContaining({ kind: 'invalid' }),
    ]);
  });
});
