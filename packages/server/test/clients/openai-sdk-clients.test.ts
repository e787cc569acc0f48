import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { Tollgate } from '../../../sdk/src/index.js';
import { tollgateOpenAI, type TollgateOpenAI } from './recipes/openai-client.js';
import { askOnce } from './recipes/openai-recover.js';
import {
  countRecords,
  expectOneRecordPerPost,
  observingFetch,
  type SentRequest,
} from './sent-requests.js';

const [sqlite] = dialects;

/**
 * Risk: the official `openai` SDK, unchanged, double-sends or fails against the gateway. Each
 * call goes through the recipe of docs/clients.md (a new Idempotency-Key per POST, retries off)
 * and must give the user the answer and leave exactly one record per request sent.
 */
describe('the official openai SDK through the docs/clients.md recipe', () => {
  let gateway: TestGateway;
  let baseURL: string;
  let key: string;
  let client: TollgateOpenAI;
  let sent: SentRequest[];
  let recordsBefore: number;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    gateway = await startGateway(sqlite);
    ({ key } = await gateway.account(1_000_000_000));
    baseURL = await gateway.listen();
  });
  beforeEach(async () => {
    sent = [];
    client = tollgateOpenAI({ baseURL, apiKey: key, fetch: observingFetch(sent) });
    recordsBefore = await countRecords(gateway);
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const weather: { name: string; description: string; parameters: Record<string, unknown> } = {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
    },
  };

  it('chat: the reply, one record', async () => {
    const completion = await client.chat.completions.create({
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'hello openai' }],
    });
    expect(completion.choices[0]?.message.content).toBe('Simulated reply to: hello openai');
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('stream: the reply and usage, one record', async () => {
    const stream = await client.chat.completions.create({
      model: 'sim-chat',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'stream it' }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('Simulated reply to: stream it');
    expect(usage?.total_tokens).toBeGreaterThan(0);
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('stream helper: finalContent(), one record', async () => {
    const stream = client.chat.completions.stream({
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'helper stream' }],
    });
    expect(await stream.finalContent()).toBe('Simulated reply to: helper stream');
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('tools: the tool call the model asked for', async () => {
    const completion = await client.chat.completions.create({
      model: 'sim-chat',
      tools: [{ type: 'function', function: weather }],
      messages: [{ role: 'user', content: 'use get_weather for Paris' }],
    });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function.name).toBe('get_weather');
    expect(JSON.parse(call?.type === 'function' ? call.function.arguments : '{}')).toEqual({
      city: expect.any(String),
    });
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('runTools: an automatic tool loop, one record per step', async () => {
    const calls: unknown[] = [];
    const runner = client.chat.completions.runTools({
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'use get_weather for Paris' }],
      tools: [
        {
          type: 'function',
          function: {
            ...weather,
            parse: JSON.parse,
            function: (args: unknown) => {
              calls.push(args);
              return 'sunny, 21 C';
            },
          },
        },
      ],
    });
    expect(await runner.finalContent()).toContain('sunny, 21 C');
    expect(calls).toHaveLength(1);
    expect(sent.filter((request) => request.method === 'POST')).toHaveLength(2);
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('runTools with a per-call header: the second step is a clean 409, one record', async () => {
    // The trap the recipe avoids: `headers` given to runTools go on every step.
    const plain = new OpenAI({ baseURL, apiKey: key, maxRetries: 0, fetch: observingFetch(sent) });
    const failure = await plain.chat.completions
      .runTools(
        {
          model: 'sim-chat',
          messages: [{ role: 'user', content: 'use get_weather for Paris' }],
          tools: [
            {
              type: 'function',
              function: { ...weather, parse: JSON.parse, function: () => 'sunny' },
            },
          ],
        },
        { headers: { 'Idempotency-Key': randomUUID() } },
      )
      .finalContent()
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.ConflictError);
    expect((failure as InstanceType<typeof OpenAI.ConflictError>).code).toBe(
      'IDEMPOTENCY_CONFLICT',
    );
    expect(sent.filter((request) => request.method === 'POST')).toHaveLength(2);
    expect(await countRecords(gateway)).toBe(recordsBefore + 1);
  });

  it('structured output: parse() with a zod schema', async () => {
    const completion = await client.chat.completions.parse({
      model: 'sim-chat',
      messages: [{ role: 'user', content: 'a city' }],
      response_format: zodResponseFormat(
        z.object({ name: z.string(), population: z.number().int() }),
        'city',
      ),
    });
    expect(completion.choices[0]?.message.parsed).toEqual({
      name: expect.any(String),
      population: expect.any(Number),
    });
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('embeddings: one vector per input', async () => {
    const embeddings = await client.embeddings.create({
      model: 'sim-embed',
      input: ['first text', 'second text'],
    });
    expect(embeddings.data.map((item) => item.index)).toEqual([0, 1]);
    expect(embeddings.data[0]?.embedding.length).toBeGreaterThan(0);
    expect(embeddings.data[0]?.embedding.every((value) => Number.isFinite(value))).toBe(true);
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });
  it('images.generate: accepted as a Tollgate task, not an image list', async () => {
    // The gateway's images are quoted, held, then settled (docs/tasks.md): the answer is the
    // task, which the SDK hands back typed as an ImagesResponse. Use @tollgate/sdk for images.
    const answer: unknown = await client.images.generate({ model: 'sim-image', prompt: 'a fox' });
    expect(answer).toMatchObject({ object: 'image.task', model: 'sim-image' });
    expect((answer as OpenAI.ImagesResponse).data).toBeUndefined();
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore, 'accepted');
  });

  it('videos.create: sent as multipart, refused with a clean 415 and nothing recorded', async () => {
    // The SDK always sends videos.create as multipart/form-data (for input_reference); the
    // gateway takes JSON. Use @tollgate/sdk for videos (docs/clients.md).
    const failure = await client.videos
      .create({ model: 'sim-video', prompt: 'a fox', seconds: '4' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(415);
    expect(await countRecords(gateway)).toBe(recordsBefore);
  });
  it('a timeout: the answer is read back by its key, not resent', async () => {
    const tollgate = new Tollgate({ baseURL, apiKey: key });
    const answer = await askOnce(client, tollgate, 'slow one [sim:delay=800]', 200);
    expect(answer).toBe('Simulated reply to: slow one');
    expect(sent.filter((request) => request.method === 'POST')).toHaveLength(1);
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });
});

/**
 * Risk: the plain JavaScript recipe of docs/clients.md (for callers without TypeScript) drifts
 * from the TypeScript one: a POST without its own key, or a retry that may pay twice.
 */
describe('the official openai SDK through the plain JavaScript recipe', () => {
  let gateway: TestGateway;
  let baseURL: string;
  let key: string;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    gateway = await startGateway(sqlite);
    ({ key } = await gateway.account(1_000_000_000));
    baseURL = await gateway.listen();
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  /** The .mjs recipe, typed as the TypeScript one it mirrors (it has no declarations). */
  async function javascriptRecipe(): Promise<typeof import('./recipes/openai-client.js')> {
    const file = new URL('./recipes/openai-client.mjs', import.meta.url).href;
    return (await import(file)) as typeof import('./recipes/openai-client.js');
  }

  it('chat twice: two replies, each POST its own key and one record', async () => {
    const { tollgateOpenAI: javascriptClient } = await javascriptRecipe();
    const sent: SentRequest[] = [];
    const recordsBefore = await countRecords(gateway);
    const client = javascriptClient({ baseURL, apiKey: key, fetch: observingFetch(sent) });
    for (const content of ['first from js', 'second from js']) {
      const completion = await client.chat.completions.create({
        model: 'sim-chat',
        messages: [{ role: 'user', content }],
      });
      expect(completion.choices[0]?.message.content).toBe(`Simulated reply to: ${content}`);
    }
    expect(sent.filter((request) => request.method === 'POST')).toHaveLength(2);
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('a 5xx is not retried: one POST sent', async () => {
    const { tollgateOpenAI: javascriptClient } = await javascriptRecipe();
    const sent: SentRequest[] = [];
    const client = javascriptClient({ baseURL, apiKey: key, fetch: observingFetch(sent) });
    const failure = await client.chat.completions
      .create({ model: 'sim-chat', messages: [{ role: 'user', content: 'x [sim:fail=503]' }] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(sent.filter((request) => request.method === 'POST')).toHaveLength(1);
  });
});
