import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namedFrames } from '../helpers/sse-frames.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';

/**
 * Risk: the gateway's future Responses adapter is tested against this simulator. If it answered
 * in another shape or event order than OpenAI, or accepted reasoning state that OpenAI refuses
 * (altered, made for another organisation, or a reasoning turn's function call without its
 * reasoning item), an adapter that drops or rewrites opaque items would pass offline and fail in
 * production. Everything here talks HTTP to a simulator started alone.
 */

let simulator: Simulator;
beforeAll(async () => {
  simulator = await startSimulator();
});
afterAll(async () => {
  await simulator.close();
});

type Json = Record<string, unknown>;
const WEATHER = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string', minLength: 3 },
      days: { type: 'integer', minimum: 1, maximum: 7 },
    },
    required: ['city', 'days'],
    additionalProperties: false,
  },
  strict: true,
};

function post(body: unknown, key = 'sk-org-one', headers: Record<string, string> = {}) {
  return fetch(`${simulator.url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify(body),
  });
}

async function json(body: unknown, key?: string) {
  const response = await post(body, key);
  return { status: response.status, body: (await response.json()) as Json };
}

async function stream(body: Json, key?: string) {
  const response = await post({ ...body, stream: true }, key);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/event-stream');
  return namedFrames(await response.text());
}

const outputOf = (body: Json) => body['output'] as Json[];

/** A reasoning turn that calls the tool, with its encrypted reasoning included. */
async function reasoningToolTurn(key = 'sk-org-one') {
  const { status, body } = await json(
    {
      model: 'sim-chat',
      input: 'please call get_weather for Paris',
      tools: [WEATHER],
      reasoning: { effort: 'medium' },
      include: ['reasoning.encrypted_content'],
      store: false,
    },
    key,
  );
  expect(status).toBe(200);
  const [reasoning, call] = outputOf(body);
  expect(reasoning).toMatchObject({ type: 'reasoning', id: expect.stringMatching(/^rs_/) });
  expect(call).toMatchObject({ type: 'function_call', name: 'get_weather' });
  return { reasoning: reasoning as Json, call: call as Json };
}

function followUp(reasoning: Json | undefined, call: Json) {
  return {
    model: 'sim-chat',
    tools: [WEATHER],
    reasoning: { effort: 'medium' },
    store: false,
    input: [
      { role: 'user', content: 'please call get_weather for Paris' },
      ...(reasoning === undefined ? [] : [reasoning]),
      call,
      { type: 'function_call_output', call_id: call['call_id'], output: 'sunny, 21C' },
    ],
  };
}

describe('simulator: OpenAI Responses, plain', () => {
  it('answers a response object with a message and integer usage', async () => {
    const { status, body } = await json({ model: 'sim-chat', input: 'hello there' });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: expect.stringMatching(/^resp_/),
      object: 'response',
      status: 'completed',
      incomplete_details: null,
      model: 'sim-chat',
    });
    expect(outputOf(body)).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [
          {
            type: 'output_text',
            annotations: [],
            logprobs: [],
            text: 'Simulated reply to: hello there',
          },
        ],
      },
    ]);
    const usage = body['usage'] as {
      input_tokens: number;
      output_tokens: number;
      total_tokens: number;
      input_tokens_details: { cached_tokens: number };
      output_tokens_details: { reasoning_tokens: number };
    };
    expect(usage).toEqual({
      input_tokens: 2,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 6,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 8,
    });
  });

  it('calls a tool with arguments that satisfy its schema, then answers its result', async () => {
    const { body } = await json({
      model: 'sim-chat',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'use get_weather' }] }],
      tools: [WEATHER],
    });
    const [call] = outputOf(body);
    expect(call).toMatchObject({
      type: 'function_call',
      id: expect.stringMatching(/^fc_/),
      call_id: expect.stringMatching(/^call_[0-9a-f]{16}$/),
      name: 'get_weather',
      status: 'completed',
    });
    const validate = new Ajv().compile(WEATHER.parameters);
    expect(validate(JSON.parse(String(call?.['arguments'])))).toBe(true);

    const result = await json({
      model: 'sim-chat',
      tools: [WEATHER],
      input: [
        { role: 'user', content: 'use get_weather' },
        call,
        { type: 'function_call_output', call_id: call?.['call_id'], output: 'sunny' },
      ],
    });
    expect(result.status).toBe(200);
    expect(outputOf(result.body)[0]).toMatchObject({
      type: 'message',
      content: [{ text: 'Based on the tool results: sunny' }],
    });
  });

  it('answers json_schema text formats with JSON that validates', async () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['name', 'tags'],
    };
    const { body } = await json({
      model: 'sim-chat',
      input: 'describe',
      text: { format: { type: 'json_schema', name: 'thing', schema, strict: true } },
    });
    const text = String((outputOf(body)[0]?.['content'] as Json[])[0]?.['text']);
    expect(new Ajv().compile(schema)(JSON.parse(text))).toBe(true);
  });

  it('is incomplete when max_output_tokens cuts the answer', async () => {
    const { body } = await json({
      model: 'sim-chat',
      input: Array.from({ length: 40 }, (_, index) => `word${index}`).join(' '),
      max_output_tokens: 16,
    });
    expect(body).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      usage: { output_tokens: 16 },
    });
    expect(outputOf(body)[0]).toMatchObject({ type: 'message', status: 'incomplete' });
  });

  it('refuses unknown fields, built-in tools and an anthropic-beta header in OpenAI error shape', async () => {
    expect(await json({ model: 'sim-chat', input: 'x', frobnicate: true })).toEqual({
      status: 400,
      body: {
        error: {
          message: "Unknown parameter: 'frobnicate'.",
          type: 'invalid_request_error',
          param: 'frobnicate',
          code: 'unknown_parameter',
        },
      },
    });
    const builtIn = await json({ model: 'sim-chat', input: 'x', tools: [{ type: 'web_search' }] });
    expect(builtIn.status).toBe(400);
    expect(builtIn.body['error']).toMatchObject({
      type: 'invalid_request_error',
      param: 'tools[0].type',
      code: 'invalid_value',
    });
    const beta = await post({ model: 'sim-chat', input: 'x' }, 'k', {
      'anthropic-beta': 'prompt-caching-2024-07-31',
    });
    expect(beta.status).toBe(400);
    expect(((await beta.json()) as Json)['error']).toMatchObject({
      code: 'anthropic_beta_not_allowed',
    });
  });

  it('refuses an anthropic-beta header on chat completions too', async () => {
    const response = await fetch(`${simulator.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-beta': 'claude-code-20250219' },
      body: JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json)['error']).toMatchObject({
      type: 'invalid_request_error',
      code: 'anthropic_beta_not_allowed',
    });
  });
});

describe('simulator: OpenAI Responses, opaque reasoning bound to the organisation', () => {
  it('accepts encrypted reasoning sent back by the same key', async () => {
    const { reasoning, call } = await reasoningToolTurn();
    expect(reasoning['encrypted_content']).toEqual(expect.stringMatching(/^[A-Za-z0-9_-]+$/));
    expect(call['call_id']).toBe(`call_rs${String(reasoning['id']).slice(3)}`);
    const { status, body } = await json(followUp(reasoning, call));
    expect(status).toBe(200);
    const message = outputOf(body).find((item) => item['type'] === 'message');
    expect(message).toMatchObject({
      content: [{ text: 'Based on the tool results: sunny, 21C' }],
    });
  });

  it('refuses encrypted reasoning that was altered', async () => {
    const { reasoning, call } = await reasoningToolTurn();
    const sealed = String(reasoning['encrypted_content']);
    const altered = `${sealed.slice(0, 10)}${sealed[10] === 'A' ? 'B' : 'A'}${sealed.slice(11)}`;
    const { status, body } = await json(
      followUp({ ...reasoning, encrypted_content: altered }, call),
    );
    expect(status).toBe(400);
    expect(body).toEqual({
      error: {
        message: `The encrypted content for item ${String(reasoning['id'])} could not be verified.`,
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_encrypted_content',
      },
    });
  });

  it('refuses encrypted reasoning made for another key (another organisation)', async () => {
    const { reasoning, call } = await reasoningToolTurn('sk-org-one');
    const { status, body } = await json(followUp(reasoning, call), 'sk-org-two');
    expect(status).toBe(400);
    expect(body['error']).toMatchObject({ code: 'invalid_encrypted_content' });
  });

  it("refuses a reasoning turn's function call without its reasoning item, in OpenAI's words", async () => {
    const { reasoning, call } = await reasoningToolTurn();
    const { status, body } = await json(followUp(undefined, call));
    expect(status).toBe(400);
    expect(body).toEqual({
      error: {
        message: `Item '${String(call['id'])}' of type 'function_call' was provided without its required 'reasoning' item: '${String(reasoning['id'])}'.`,
        type: 'invalid_request_error',
        param: 'input',
        code: null,
      },
    });
  });

  it('finds a stored reasoning item by id alone for its organisation only', async () => {
    const first = await json(
      {
        model: 'sim-chat',
        input: 'call get_weather',
        tools: [WEATHER],
        reasoning: { effort: 'low' },
      },
      'sk-org-one',
    );
    const [reasoning, call] = outputOf(first.body) as [Json, Json];
    expect(reasoning['encrypted_content']).toBeUndefined();
    const again = { ...followUp(reasoning, call), store: true };
    expect((await json(again, 'sk-org-one')).status).toBe(200);
    const elsewhere = await json(again, 'sk-org-two');
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body['error']).toMatchObject({
      message: `Item with id '${String(reasoning['id'])}' not found.`,
    });
  });
});

describe('simulator: OpenAI Responses, streamed', () => {
  it('sends OpenAI’s events in order with sequence numbers from 0, text equal to the plain answer', async () => {
    const events = await stream({ model: 'sim-chat', input: 'hello streaming world' });
    const types = events.map((event) => event.event);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array<string>(6).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    events.forEach((event, index) => {
      expect(event.data['type']).toBe(event.event);
      expect(event.data['sequence_number']).toBe(index);
    });
    const text = events
      .filter((event) => event.event === 'response.output_text.delta')
      .map((event) => event.data['delta'])
      .join('');
    expect(text).toBe('Simulated reply to: hello streaming world');
    const completed = events.at(-1)?.data['response'] as Json;
    expect(completed['usage']).toEqual(
      (await json({ model: 'sim-chat', input: 'hello streaming world' })).body['usage'],
    );
  });

  it('streams reasoning summary events, then the function call arguments', async () => {
    const events = await stream({
      model: 'sim-chat',
      input: 'call get_weather',
      tools: [WEATHER],
      reasoning: { effort: 'high' },
      include: ['reasoning.encrypted_content'],
    });
    const types = events.map((event) => event.event);
    const distinct = types.filter((type, index) => type !== types[index - 1]);
    expect(distinct).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const args = events
      .filter((event) => event.event === 'response.function_call_arguments.delta')
      .map((event) => event.data['delta'])
      .join('');
    expect(new Ajv().compile(WEATHER.parameters)(JSON.parse(args))).toBe(true);
    const done = events.filter((event) => event.event === 'response.output_item.done');
    expect((done[0]?.data['item'] as Json)['encrypted_content']).toEqual(expect.any(String));
    const usage = (events.at(-1)?.data['response'] as Json)['usage'] as Json;
    expect(usage['output_tokens_details']).toEqual({ reasoning_tokens: expect.any(Number) });
  });

  it('[sim:error_after=N] sends N events, then an error event and response.failed', async () => {
    const events = await stream({ model: 'sim-chat', input: 'a b c [sim:error_after=3]' });
    expect(events.map((event) => event.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'error',
      'response.failed',
    ]);
    expect(events[3]?.data).toMatchObject({ type: 'error', sequence_number: 3 });
    expect(events[4]?.data).toMatchObject({
      sequence_number: 4,
      response: { status: 'failed' },
    });
  });

  it('[sim:cut_after=N] drops the connection; [sim:no_usage] completes without usage', async () => {
    const cut = await post({ model: 'sim-chat', input: 'a b c [sim:cut_after=2]', stream: true });
    expect(cut.status).toBe(200);
    await expect(cut.text()).rejects.toThrow();

    const events = await stream({ model: 'sim-chat', input: 'a b c [sim:no_usage]' });
    const completed = events.at(-1);
    expect(completed?.event).toBe('response.completed');
    expect((completed?.data['response'] as Json)['usage']).toBeUndefined();
  });

  it('[sim:fail=STATUS] answers that status in OpenAI error shape', async () => {
    const { status, body } = await json({ model: 'sim-chat', input: 'x [sim:fail=503]' });
    expect(status).toBe(503);
    expect(body['error']).toMatchObject({ message: 'simulated failure 503' });
  });
});

describe('simulator: OpenAI Responses compaction', () => {
  it('answers the user messages and one sealed compaction item, accepted back by the same key only', async () => {
    const input = [
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'second question' },
    ];
    const response = await fetch(`${simulator.url}/v1/responses/compact`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-org-one' },
      body: JSON.stringify({ model: 'sim-chat', input }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Json;
    expect(body['object']).toBe('response.compaction');
    const output = outputOf(body);
    expect(output.map((item) => item['type'])).toEqual(['message', 'message', 'compaction']);
    const compaction = output[2] as Json;
    expect(compaction['id']).toEqual(expect.stringMatching(/^cmp_/));
    const later = {
      model: 'sim-chat',
      input: [compaction, { role: 'user', content: 'third question' }],
    };
    expect((await json(later, 'sk-org-one')).status).toBe(200);
    const foreign = await json(later, 'sk-org-two');
    expect(foreign.status).toBe(400);
    expect(foreign.body['error']).toMatchObject({ code: 'invalid_encrypted_content' });
  });
});
