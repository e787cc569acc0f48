import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { defaultConfig } from '../../src/config/default-config.js';

const [sqlite] = dialects;

/**
 * Risk: the clients people use fail against the gateway for fields OpenAI accepts. The usual
 * multi-turn pattern (push the SDK's own message back after `parse()` or `finalMessage()`) must
 * work; OpenAI request fields are forwarded, dropped with a header naming them, or refused with
 * the reason — never a bare "is not a known field" (docs/chat.md, "Request fields").
 */
describe('OpenAI request fields and client-library messages', () => {
  let gateway: TestGateway;
  let client: OpenAI;
  let key: string;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    const config = testConfig({
      models: defaultConfig.models.map((model) =>
        model.id === 'sim-vision'
          ? { ...model, upstream_fields: ['store', 'metadata', 'logprobs'] }
          : model,
      ),
    });
    gateway = await startGateway(sqlite, { config });
    ({ key } = await gateway.account(1_000_000_000));
    client = new OpenAI({ apiKey: key, baseURL: await gateway.listen(), maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const once = () => ({ headers: { 'Idempotency-Key': randomUUID() } });
  const chat = (body: Record<string, unknown>) =>
    gateway.call('POST', '/v1/chat/completions', {
      key,
      body: { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }], ...body },
    });

  it('a message from chat.completions.parse() goes back into the next turn', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'give me a city' },
    ];
    const parsed = await client.chat.completions.parse(
      {
        model: 'sim-chat',
        messages,
        response_format: zodResponseFormat(z.object({ city: z.string() }), 'city'),
      },
      once(),
    );
    const message = parsed.choices[0]?.message;
    expect(message?.parsed).toEqual({ city: expect.any(String) });
    if (message === undefined) throw new Error('no message');
    messages.push(message, { role: 'user', content: 'and another' });
    const next = await client.chat.completions
      .create({ model: 'sim-chat', messages }, once())
      .withResponse();
    expect(next.data.choices[0]?.message.content).toEqual(expect.any(String));
    expect(next.response.headers.get('x-tollgate-dropped-fields')).toContain('messages[].parsed');
  });

  it('a message from stream().finalMessage() goes back into the next turn', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'stream it' }];
    const stream = client.chat.completions.stream({ model: 'sim-chat', messages }, once());
    const final = await stream.finalMessage();
    messages.push(final, { role: 'user', content: 'again' });
    const next = await client.chat.completions.create({ model: 'sim-chat', messages }, once());
    expect(next.choices[0]?.message.content).toEqual(expect.any(String));
  });

  it('hint and storage fields are dropped and named; configured ones are forwarded', async () => {
    const dropped = await chat({
      store: true,
      metadata: { team: 'a' },
      service_tier: 'auto',
      prompt_cache_key: 'k1',
      safety_identifier: 'user-7',
      verbosity: 'low',
      prediction: { type: 'content', content: 'hi' },
      modalities: ['text'],
      logprobs: false,
      logit_bias: {},
    });
    expect(dropped.statusCode, dropped.body).toBe(200);
    expect(dropped.headers['x-tollgate-dropped-fields']).toBe(
      'store, metadata, service_tier, prompt_cache_key, safety_identifier, verbosity, prediction, logprobs, logit_bias, modalities',
    );
    const configured = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: {
        model: 'sim-vision',
        messages: [{ role: 'user', content: 'hi' }],
        store: false,
        metadata: { team: 'a' },
        logprobs: true,
      },
    });
    expect(configured.statusCode, configured.body).toBe(200);
    expect(configured.headers['x-tollgate-dropped-fields']).toBeUndefined();
  });

  it('fields that would change the answer are refused with the reason when not configured', async () => {
    for (const [body, param] of [
      [{ logprobs: true }, 'logprobs'],
      [{ logprobs: true, top_logprobs: 3 }, 'logprobs'],
      [{ logit_bias: { '50256': -100 } }, 'logit_bias'],
      [{ modalities: ['text', 'audio'] }, 'modalities'],
    ] as const) {
      const refused = await chat(body);
      expect(refused.statusCode, JSON.stringify(body)).toBe(400);
      expect(refused.json()).toMatchObject({ error: { code: 'UNSUPPORTED_CAPABILITY', param } });
    }
    const legacy = await chat({ functions: [{ name: 'f', parameters: { type: 'object' } }] });
    expect(legacy.statusCode).toBe(400);
    expect(legacy.json()).toMatchObject({
      error: { param: 'functions', message: expect.stringContaining('send tools') },
    });
    const badValue = await chat({ service_tier: 'fastest' });
    expect(badValue.json()).toMatchObject({
      error: { code: 'INVALID_CHAT_SETTINGS', param: 'service_tier' },
    });
  });

  it('reasoning_effort none and xhigh, and tool_choice allowed_tools, are accepted', async () => {
    expect((await chat({ reasoning_effort: 'none' })).statusCode).toBe(200);
    const tools = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
    ];
    const xhigh = await chat({ reasoning_effort: 'xhigh', tools });
    expect(xhigh.statusCode, xhigh.body).toBe(200);
    const allowed = await chat({
      tools,
      tool_choice: {
        type: 'allowed_tools',
        allowed_tools: {
          mode: 'required',
          tools: [{ type: 'function', function: { name: 'get_time' } }],
        },
      },
    });
    expect(allowed.statusCode, allowed.body).toBe(200);
    expect(
      allowed.json<{ choices: { message: { tool_calls: { function: { name: string } }[] } }[] }>()
        .choices[0]?.message.tool_calls[0]?.function.name,
    ).toBe('get_time');
    const unknown = await chat({
      tools,
      tool_choice: {
        type: 'allowed_tools',
        allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'nope' } }] },
      },
    });
    expect(unknown.statusCode).toBe(400);
  });

  it('embeddings take token arrays (one list, or one per input), held and billed on the ids given', async () => {
    const lists = await client.embeddings
      .create(
        {
          model: 'sim-embed',
          input: [
            [15496, 995, 11],
            [40, 1101],
          ],
        },
        once(),
      )
      .withResponse();
    expect(lists.data.data).toHaveLength(2);
    expect(lists.data.usage.prompt_tokens).toBe(5);
    const record = await gateway.call(
      'GET',
      `/v1/requests/${String(lists.response.headers.get('x-service-request-id'))}`,
      { key },
    );
    // Held: 5 ids + 8 special tokens per input; billed: the 5 the upstream counted.
    expect(record.json()).toMatchObject({
      status: 'succeeded',
      reserve: { amount: Math.ceil((21 * 500_000) / 1_000_000) },
      bill: { amount: Math.ceil((5 * 500_000) / 1_000_000) },
    });
    const one = await client.embeddings.create({ model: 'sim-embed', input: [15496, 995] }, once());
    expect(one.data).toHaveLength(1);
    for (const input of [[[-1]], [[1.5]], [1, 'a'], [[]]]) {
      const refused = await gateway.call('POST', '/v1/embeddings', {
        key,
        body: { model: 'sim-embed', input },
      });
      expect(refused.statusCode, JSON.stringify(input)).toBe(400);
    }
  });

  it('a legacy function_call on an assistant message is refused with the way forward', async () => {
    const refused = await chat({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } },
        { role: 'user', content: 'y' },
      ],
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: { param: 'messages.1.function_call' } });
  });
});
