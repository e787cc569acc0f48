import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namedFrames } from '../helpers/sse-frames.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';

/**
 * Risk: the gateway's future Anthropic adapter is tested against this simulator. If it answered
 * in another shape or event order than Anthropic, accepted thinking signatures that Anthropic
 * refuses (altered, or made for another organisation), let a tool loop drop its thinking block,
 * reported cache tokens inside `input_tokens`, or accepted any `anthropic-beta`, an adapter that
 * mishandles any of these would pass offline and fail (or bill wrongly) in production.
 */

let simulator: Simulator;
let clock = Date.UTC(2026, 0, 1);
beforeAll(async () => {
  simulator = await startSimulator({ now: () => clock });
});
afterAll(async () => {
  await simulator.close();
});

type Json = Record<string, unknown>;
const WEATHER_SCHEMA = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 3 },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
  },
  required: ['city', 'unit'],
};
const WEATHER = { name: 'get_weather', description: 'Weather', input_schema: WEATHER_SCHEMA };
const THINKING = { type: 'enabled', budget_tokens: 1024 };

function post(
  path: string,
  body: unknown,
  key = 'sk-ant-one',
  headers: Record<string, string> = { 'anthropic-version': '2023-06-01' },
) {
  return fetch(`${simulator.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers },
    body: JSON.stringify(body),
  });
}

async function message(body: unknown, key?: string, headers?: Record<string, string>) {
  const response = await post('/v1/messages', body, key, headers);
  return { status: response.status, body: (await response.json()) as Json };
}

async function stream(body: Json) {
  const response = await post('/v1/messages', { ...body, stream: true });
  expect(response.status).toBe(200);
  return namedFrames(await response.text());
}

const refusal = (text: string) => ({
  type: 'error',
  error: { type: 'invalid_request_error', message: text },
});

/** A thinking turn that calls the tool: the assistant message to send back, and the tool call. */
async function thinkingToolTurn(key = 'sk-ant-one') {
  const { status, body } = await message(
    {
      model: 'sim-chat',
      max_tokens: 4096,
      thinking: THINKING,
      tools: [WEATHER],
      messages: [{ role: 'user', content: 'use get_weather for Paris' }],
    },
    key,
  );
  expect(status).toBe(200);
  const content = body['content'] as Json[];
  expect(content.map((block) => block['type'])).toEqual(['thinking', 'tool_use']);
  return content;
}

function toolLoop(assistant: Json[]) {
  const toolUse = assistant.find((block) => block['type'] === 'tool_use') ?? {};
  return {
    model: 'sim-chat',
    max_tokens: 4096,
    thinking: THINKING,
    tools: [WEATHER],
    messages: [
      { role: 'user', content: 'use get_weather for Paris' },
      { role: 'assistant', content: assistant },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: toolUse['id'], content: 'sunny, 21C' }],
      },
    ],
  };
}

describe('simulator: Anthropic Messages, plain', () => {
  it('answers a message with end_turn and integer usage whose input excludes the cache', async () => {
    const { status, body } = await message({
      model: 'sim-chat',
      max_tokens: 256,
      system: 'be brief',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
    });
    expect(status).toBe(200);
    expect(body).toEqual({
      id: expect.stringMatching(/^msg_/) as string,
      type: 'message',
      role: 'assistant',
      model: 'sim-chat',
      content: [{ type: 'text', text: 'Simulated reply to: hello there' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 4,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        output_tokens: 6,
        service_tier: 'standard',
      },
    });
  });

  it('calls a tool with input that satisfies its input_schema, after a signed thinking block', async () => {
    const [thinking, toolUse] = await thinkingToolTurn();
    expect(thinking).toMatchObject({ thinking: expect.any(String), signature: expect.any(String) });
    expect(toolUse).toMatchObject({ id: expect.stringMatching(/^toolu_/), name: 'get_weather' });
    expect(new Ajv().compile(WEATHER_SCHEMA)(toolUse?.['input'])).toBe(true);
  });

  it('ends at max_tokens and at a stop sequence', async () => {
    const capped = await message({
      model: 'sim-chat',
      max_tokens: 3,
      messages: [{ role: 'user', content: 'one two three four five' }],
    });
    expect(capped.body).toMatchObject({ stop_reason: 'max_tokens', usage: { output_tokens: 3 } });
    const stopped = await message({
      model: 'sim-chat',
      max_tokens: 100,
      stop_sequences: ['STOP'],
      messages: [{ role: 'user', content: 'go on STOP and more' }],
    });
    expect(stopped.body).toMatchObject({
      stop_reason: 'stop_sequence',
      stop_sequence: 'STOP',
      content: [{ type: 'text', text: 'Simulated reply to: go on ' }],
    });
  });

  it('counts tokens as the answer counts its input', async () => {
    const body = {
      model: 'sim-chat',
      system: [{ type: 'text', text: 'a system prompt of several words' }],
      tools: [WEATHER],
      messages: [{ role: 'user', content: 'how many tokens' }],
    };
    const counted = await post('/v1/messages/count_tokens', body);
    expect(counted.status).toBe(200);
    const { input_tokens: tokens } = (await counted.json()) as { input_tokens: number };
    const answered = await message({ ...body, max_tokens: 100 });
    expect((answered.body['usage'] as Json)['input_tokens']).toBe(tokens);
  });

  it('refuses in Anthropic’s shape: no anthropic-version, no max_tokens, unknown fields', async () => {
    const body = { model: 'sim-chat', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] };
    expect(await message(body, 'k', {})).toEqual({
      status: 400,
      body: refusal('anthropic-version: header is required'),
    });
    expect(await message({ ...body, max_tokens: undefined })).toEqual({
      status: 400,
      body: refusal('max_tokens: Field required'),
    });
    expect(await message({ ...body, frobnicate: 1 })).toEqual({
      status: 400,
      body: refusal('frobnicate: Extra inputs are not permitted'),
    });
  });
});

describe('simulator: Anthropic betas', () => {
  it('accepts the betas Claude Code sends and refuses any other, as Anthropic does', async () => {
    const body = { model: 'sim-chat', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] };
    const claudeCode = [
      'claude-code-20250219',
      'oauth-2025-04-20',
      'interleaved-thinking-2025-05-14',
      'fine-grained-tool-streaming-2025-05-14',
      'context-management-2025-06-27',
      'prompt-caching-2024-07-31',
    ].join(',');
    const accepted = await message(body, 'k', {
      'anthropic-version': '2023-06-01',
      'anthropic-beta': claudeCode,
    });
    expect(accepted.status).toBe(200);
    expect(
      await message(body, 'k', {
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'claude-code-20250219, made-up-2099-01-01,other-x',
      }),
    ).toEqual({
      status: 400,
      body: refusal(
        'Unexpected value(s) `made-up-2099-01-01`, `other-x` for the `anthropic-beta` header. Please consult our documentation at docs.anthropic.com or try again without the header.',
      ),
    });
  });
});

describe('simulator: Anthropic thinking signatures bound to the organisation', () => {
  it('accepts the thinking block sent back unchanged by the same key', async () => {
    const assistant = await thinkingToolTurn();
    const { status, body } = await message(toolLoop(assistant));
    expect(status).toBe(200);
    expect(body['content']).toEqual([
      { type: 'thinking', thinking: expect.any(String), signature: expect.any(String) },
      { type: 'text', text: 'Based on the tool results: sunny, 21C' },
    ]);
  });

  it('refuses an altered thinking text and a signature made for another key', async () => {
    const assistant = await thinkingToolTurn();
    const [thinking, toolUse] = assistant as [Json, Json];
    const altered = [{ ...thinking, thinking: `${String(thinking['thinking'])}!` }, toolUse];
    const invalid = refusal('messages.1.content.0: Invalid `signature` in `thinking` block');
    expect(await message(toolLoop(altered))).toEqual({ status: 400, body: invalid });
    expect(await message(toolLoop(assistant), 'sk-ant-two')).toEqual({
      status: 400,
      body: invalid,
    });
  });

  it('refuses a final assistant tool_use turn without its thinking block when thinking is on', async () => {
    const assistant = await thinkingToolTurn();
    const withoutThinking = assistant.filter((block) => block['type'] !== 'thinking');
    const { status, body } = await message(toolLoop(withoutThinking));
    expect(status).toBe(400);
    expect((body['error'] as Json)['message']).toBe(
      'messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking',
    );
    // The same history with thinking off is fine.
    const { thinking: _off, ...plain } = toolLoop(withoutThinking);
    expect((await message(plain)).status).toBe(200);
  });
});

describe('simulator: Anthropic prompt caching', () => {
  const cached = (text: string, ttl?: '1h') => ({
    model: 'sim-chat',
    max_tokens: 100,
    system: [
      {
        type: 'text',
        text,
        cache_control: ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl },
      },
    ],
    messages: [{ role: 'user', content: 'the question' }],
  });

  it('writes a marked prefix once, then reads it, per organisation; input_tokens is the rest', async () => {
    const prefix = 'a long and stable system prompt with many words in it';
    const first = await message(cached(prefix));
    expect(first.body['usage']).toMatchObject({
      input_tokens: 2,
      cache_creation_input_tokens: 11,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 11, ephemeral_1h_input_tokens: 0 },
    });
    const second = await message(cached(prefix));
    expect(second.body['usage']).toMatchObject({
      input_tokens: 2,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 11,
    });
    const otherOrganisation = await message(cached(prefix), 'sk-ant-two');
    expect(otherOrganisation.body['usage']).toMatchObject({
      cache_creation_input_tokens: 11,
      cache_read_input_tokens: 0,
    });
  });

  it('splits writes by TTL and forgets a prefix once its TTL has passed', async () => {
    const prefix = 'another stable prefix for the hour';
    const first = await message(cached(prefix, '1h'));
    expect(first.body['usage']).toMatchObject({
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 6 },
    });
    clock += 30 * 60_000;
    expect((await message(cached(prefix, '1h'))).body['usage']).toMatchObject({
      cache_read_input_tokens: 6,
    });
    clock += 61 * 60_000;
    expect((await message(cached(prefix, '1h'))).body['usage']).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 6,
    });
  });
});

describe('simulator: Anthropic Messages, streamed', () => {
  it('sends Anthropic’s events in order for thinking and a tool call', async () => {
    const events = await stream({
      model: 'sim-chat',
      max_tokens: 4096,
      thinking: THINKING,
      tools: [WEATHER],
      messages: [{ role: 'user', content: 'use get_weather' }],
    });
    for (const event of events) expect(event.data['type']).toBe(event.event);
    const steps = events.map((event) => {
      const delta = event.data['delta'] as Json | undefined;
      return event.event === 'content_block_delta' ? String(delta?.['type']) : event.event;
    });
    const distinct = steps.filter((step, index) => step !== steps[index - 1]);
    expect(distinct).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'thinking_delta',
      'signature_delta',
      'content_block_stop',
      'content_block_start',
      'input_json_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const start = events[0]?.data['message'] as Json;
    expect(start['usage']).toMatchObject({ input_tokens: expect.any(Number) as number });
    const json = events
      .filter((event) => (event.data['delta'] as Json | undefined)?.['type'] === 'input_json_delta')
      .map((event) => (event.data['delta'] as Json)['partial_json'])
      .join('');
    expect(new Ajv().compile(WEATHER_SCHEMA)(JSON.parse(json))).toBe(true);
    const delta = events.at(-2)?.data as Json;
    expect(delta).toMatchObject({
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: {
        output_tokens: expect.any(Number) as number,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
  });

  it('streams a text answer whose deltas make the plain answer', async () => {
    const events = await stream({
      model: 'sim-chat',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi there' }],
    });
    expect(events.map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      ...Array<string>(5).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const text = events
      .map((event) => (event.data['delta'] as { text?: string } | undefined)?.text ?? '')
      .join('');
    expect(text).toBe('Simulated reply to: hi there');
  });

  it('[sim:error_after=N] sends N events then an error event; [sim:cut_after=N] drops the connection', async () => {
    const events = await stream({
      model: 'sim-chat',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'a b c [sim:error_after=2]' }],
    });
    expect(events.map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start',
      'error',
    ]);
    expect(events[2]?.data).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'simulated failure mid-stream' },
    });
    const cut = await post('/v1/messages', {
      model: 'sim-chat',
      max_tokens: 100,
      stream: true,
      messages: [{ role: 'user', content: 'a b c [sim:cut_after=3]' }],
    });
    await expect(cut.text()).rejects.toThrow();
  });

  it('[sim:no_usage] leaves usage out; [sim:fail=STATUS] answers in Anthropic’s shape', async () => {
    const events = await stream({
      model: 'sim-chat',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'x [sim:no_usage]' }],
    });
    expect((events[0]?.data['message'] as Json)['usage']).toBeUndefined();
    expect(events.at(-2)?.data['usage']).toBeUndefined();
    expect(
      await message({
        model: 'sim-chat',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'x [sim:fail=529]' }],
      }),
    ).toEqual({
      status: 529,
      body: {
        type: 'error',
        error: { type: 'overloaded_error', message: 'simulated failure 529' },
      },
    });
  });
});
