import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const [sqlite] = dialects;

describe('chat completions: plain, tools, thinking, structured output', () => {
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    gateway = await startGateway(sqlite);
    ({ key, accountId } = await gateway.account(1_000_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const chat = (body: Record<string, unknown>) =>
    gateway.call('POST', '/v1/chat/completions', { key, body: { model: 'sim-chat', ...body } });

  it('answers a plain chat and bills exactly its reported usage', async () => {
    const before = await gateway.balance(accountId);
    const response = await chat({
      messages: [{ role: 'user', content: 'hello there' }],
      max_tokens: 50,
    });
    expect(response.statusCode).toBe(200);
    const body = response.json<{
      id: string;
      object: string;
      model: string;
      choices: { message: { content: string } }[];
      usage: { prompt_tokens: number; completion_tokens: number };
    }>();
    expect(body).toMatchObject({ object: 'chat.completion', model: 'sim-chat' });
    expect(body.choices[0]?.message.content).toBe('Simulated reply to: hello there');
    const cost =
      Math.ceil((body.usage.prompt_tokens * 2_000_000) / 1e6) +
      Math.ceil((body.usage.completion_tokens * 8_000_000) / 1e6);
    const record = (
      await gateway.call(
        'GET',
        `/v1/requests/${String(response.headers['x-service-request-id'])}`,
        { key },
      )
    ).json<{ bill: { amount: number }; status: string }>();
    expect(record).toMatchObject({ status: 'succeeded', bill: { amount: cost } });
    expect((await gateway.balance(accountId)).balance).toBe(before.balance - cost);
  });

  it('returns a tool call when tools are offered and the prompt asks for one', async () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          parameters: {
            type: 'object',
            properties: { city: { type: 'string' } },
            required: ['city'],
          },
        },
      },
    ];
    const response = await chat({
      messages: [{ role: 'user', content: 'call get_weather for Paris' }],
      tools,
    });
    expect(response.statusCode).toBe(200);
    const choice = response.json<{
      choices: {
        message: {
          content: null;
          tool_calls: { id: string; function: { name: string; arguments: string } }[];
        };
        finish_reason: string;
      }[];
    }>().choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.tool_calls[0]?.function.name).toBe('get_weather');
    expect(JSON.parse(choice?.message.tool_calls[0]?.function.arguments ?? '')).toHaveProperty(
      'city',
    );
  });

  it('continues after tool results, passing the original messages through', async () => {
    const messages = [
      { role: 'user', content: 'call get_weather' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny, 21C' },
    ];
    const tools = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
    ];
    const response = await chat({ messages, tools });
    expect(response.statusCode).toBe(200);
    expect(
      response.json<{ choices: { message: { content: string } }[] }>().choices[0]?.message.content,
    ).toContain('sunny, 21C');
  });

  it('thinks when asked, and bills reasoning tokens', async () => {
    const response = await chat({
      messages: [{ role: 'user', content: 'ponder this' }],
      reasoning_effort: 'low',
      tools: [{ type: 'function', function: { name: 'noop' } }],
    });
    expect(response.statusCode).toBe(200);
    const body = response.json<{
      choices: { message: { reasoning_content: string } }[];
      usage: { completion_tokens_details: { reasoning_tokens: number } };
    }>();
    expect(body.choices[0]?.message.reasoning_content).toContain('Thinking about');
    expect(body.usage.completion_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  });

  it('answers json_schema requests with JSON that validates against the schema', async () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 3 },
        age: { type: 'integer', minimum: 18 },
        tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, minItems: 2 },
      },
      required: ['name', 'age', 'tags'],
      additionalProperties: false,
    };
    const response = await chat({
      messages: [{ role: 'user', content: 'describe a person' }],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'person', schema, strict: true },
      },
      tools: [{ type: 'function', function: { name: 'noop' } }],
    });
    expect(response.statusCode).toBe(200);
    const value = JSON.parse(
      response.json<{ choices: { message: { content: string } }[] }>().choices[0]?.message
        .content ?? '',
    ) as { name: string; age: number; tags: string[] };
    expect(value.name.length).toBeGreaterThanOrEqual(3);
    expect(Number.isInteger(value.age) && value.age >= 18).toBe(true);
    expect(value.tags.length).toBeGreaterThanOrEqual(2);
    expect(value.tags.every((tag) => tag === 'a' || tag === 'b')).toBe(true);
  });

  it('holds the output cap: max_tokens limits what the upstream may produce', async () => {
    const response = await chat({
      messages: [{ role: 'user', content: 'one two three four five six seven eight' }],
      max_tokens: 3,
    });
    const body = response.json<{
      choices: { finish_reason: string }[];
      usage: { completion_tokens: number };
    }>();
    expect(body.usage.completion_tokens).toBeLessThanOrEqual(3);
    expect(body.choices[0]?.finish_reason).toBe('length');
  });
});
