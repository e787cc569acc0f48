import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const [sqlite] = dialects;

/** The official SDK as a caller following the spec's rules: no retries, an Idempotency-Key per request. */
describe('the official openai SDK against the gateway', () => {
  let gateway: TestGateway;
  let client: OpenAI;
  let key: string;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    gateway = await startGateway(sqlite);
    ({ key } = await gateway.account(1_000_000_000));
    client = new OpenAI({ apiKey: key, baseURL: await gateway.listen(), maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const record = async (requestId: string | null) =>
    (await gateway.call('GET', `/v1/requests/${String(requestId)}`, { key })).json<{
      status: string;
      bill: { amount: number; captured: boolean };
    }>();

  it('plain chat, then the record of the original request', async () => {
    const idempotencyKey = randomUUID();
    const { data, response } = await client.chat.completions
      .create(
        { model: 'sim-chat', messages: [{ role: 'user', content: 'hello sdk' }] },
        { headers: { 'Idempotency-Key': idempotencyKey } },
      )
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('Simulated reply to: hello sdk');
    const byKey = (
      await gateway.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, { key })
    ).json<{ id: string; status: string }>();
    expect(byKey).toMatchObject({
      id: response.headers.get('x-service-request-id'),
      status: 'succeeded',
    });
    expect((await record(response.headers.get('x-service-request-id'))).bill.captured).toBe(true);
  });

  it('streamed chat with usage', async () => {
    const { data: stream, response } = await client.chat.completions
      .create(
        {
          model: 'sim-chat',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'stream to the sdk' }],
        },
        { headers: { 'Idempotency-Key': randomUUID() } },
      )
      .withResponse();
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Simulated reply to: stream to the sdk');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    expect(await record(response.headers.get('x-service-request-id'))).toMatchObject({
      status: 'succeeded',
    });
  });

  it('a tool call and its continuation', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_time',
          parameters: { type: 'object', properties: { zone: { type: 'string' } } },
        },
      },
    ];
    const first = await client.chat.completions.create(
      { model: 'sim-chat', tools, messages: [{ role: 'user', content: 'use get_time for Tokyo' }] },
      { headers: { 'Idempotency-Key': randomUUID() } },
    );
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' ? call.function.name : undefined).toBe('get_time');
    const second = await client.chat.completions.create(
      {
        model: 'sim-chat',
        tools,
        messages: [
          { role: 'user', content: 'use get_time for Tokyo' },
          first.choices[0]?.message as OpenAI.ChatCompletionMessageParam,
          { role: 'tool', tool_call_id: call?.id ?? '', content: '09:00' },
        ],
      },
      { headers: { 'Idempotency-Key': randomUUID() } },
    );
    expect(second.choices[0]?.message.content).toContain('09:00');
  });

  it('structured output', async () => {
    const completion = await client.chat.completions.create(
      {
        model: 'sim-chat',
        tools: [{ type: 'function', function: { name: 'noop' } }],
        messages: [{ role: 'user', content: 'a city' }],
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'city',
            schema: {
              type: 'object',
              properties: { name: { type: 'string' }, population: { type: 'integer', minimum: 1 } },
              required: ['name', 'population'],
            },
          },
        },
      },
      { headers: { 'Idempotency-Key': randomUUID() } },
    );
    const city = JSON.parse(completion.choices[0]?.message.content ?? '{}') as {
      name: string;
      population: number;
    };
    expect(typeof city.name).toBe('string');
    expect(city.population).toBeGreaterThanOrEqual(1);
  });

  it('surfaces our error codes through the SDK error classes', async () => {
    const failure = await client.chat.completions
      .create({ model: 'sim-chat', messages: [] }, { headers: { 'Idempotency-Key': randomUUID() } })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    expect((failure as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('INVALID_INPUT');
    const midStream = await (async () => {
      const stream = await client.chat.completions.create(
        {
          model: 'sim-chat',
          stream: true,
          messages: [{ role: 'user', content: 'a b c d e f [sim:cut_after=3]' }],
        },
        { headers: { 'Idempotency-Key': randomUUID() } },
      );
      for await (const chunk of stream) void chunk;
    })().catch((error: unknown) => error);
    expect(midStream).toBeInstanceOf(OpenAI.APIError);
    const unknown = (
      await gateway.services.store.db
        .selectFrom('requests')
        .select('id')
        .where('status', '=', 'submission_unknown')
        .execute()
    )[0];
    await gateway.admin('POST', `/admin/v1/requests/${String(unknown?.id)}/resolve`, {
      action: 'release',
      reason: 'test cleanup',
    });
  });
});
