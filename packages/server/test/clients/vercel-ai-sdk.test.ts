import { embed, embedMany, generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { tollgateProvider } from './recipes/vercel-ai-provider.js';
import {
  countRecords,
  expectOneRecordPerPost,
  observingFetch,
  type SentRequest,
} from './sent-requests.js';

const [sqlite] = dialects;

/**
 * Risk: the Vercel AI SDK, unchanged, double-sends (it retries 409 and 5xx by default) or fails
 * against the gateway. Each call goes through the recipe of docs/clients.md (a fetch wrapper with
 * a new Idempotency-Key per POST, `maxRetries: 0`) and must give the user the answer and leave
 * exactly one record per request sent.
 */
describe('the Vercel AI SDK through the docs/clients.md recipe', () => {
  let gateway: TestGateway;
  let baseURL: string;
  let key: string;
  let tollgate: ReturnType<typeof tollgateProvider>;
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
    tollgate = tollgateProvider({ baseURL, apiKey: key, fetch: observingFetch(sent) });
    recordsBefore = await countRecords(gateway);
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const getWeather = (calls: unknown[]) =>
    tool({
      description: 'The weather in a city',
      inputSchema: z.object({ city: z.string() }),
      execute: async (input) => {
        calls.push(input);
        return 'sunny, 21 C';
      },
    });

  it('generateText: the reply, one record', async () => {
    const { text, usage } = await generateText({
      model: tollgate('sim-chat'),
      prompt: 'hello ai sdk',
      maxRetries: 0,
    });
    expect(text).toBe('Simulated reply to: hello ai sdk');
    expect(usage.totalTokens).toBeGreaterThan(0);
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('streamText: the reply and usage, one record', async () => {
    const result = streamText({
      model: tollgate('sim-chat'),
      prompt: 'stream it',
      maxRetries: 0,
    });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe('Simulated reply to: stream it');
    expect((await result.usage).outputTokens).toBeGreaterThan(0);
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('tools: the tool call the model asked for, one step', async () => {
    const { toolCalls } = await generateText({
      model: tollgate('sim-chat'),
      tools: { get_weather: tool({ inputSchema: z.object({ city: z.string() }) }) },
      prompt: 'use get_weather for Paris',
      maxRetries: 0,
    });
    expect(toolCalls[0]).toMatchObject({
      toolName: 'get_weather',
      input: { city: expect.any(String) },
    });
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('generateText with stopWhen: an automatic tool loop, one record per step', async () => {
    const calls: unknown[] = [];
    const { text, steps } = await generateText({
      model: tollgate('sim-chat'),
      tools: { get_weather: getWeather(calls) },
      stopWhen: stepCountIs(3),
      prompt: 'use get_weather for Paris',
      maxRetries: 0,
    });
    expect(text).toContain('sunny, 21 C');
    expect(calls).toHaveLength(1);
    expect(steps).toHaveLength(2);
    expect(sent.filter((request) => request.method === 'POST')).toHaveLength(2);
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('stopWhen with a per-call header: the second step is a clean 409, not retried', async () => {
    const failure = await generateText({
      model: tollgate('sim-chat'),
      tools: { get_weather: getWeather([]) },
      stopWhen: stepCountIs(3),
      prompt: 'use get_weather for Paris',
      headers: { 'Idempotency-Key': randomUUID() },
      maxRetries: 0,
    }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ statusCode: 409 });
    expect(String((failure as { responseBody?: string }).responseBody)).toContain(
      'IDEMPOTENCY_CONFLICT',
    );
    expect(sent.filter((request) => request.method === 'POST')).toHaveLength(2);
    expect(await countRecords(gateway)).toBe(recordsBefore + 1);
  });

  it('generateObject: the parsed object', async () => {
    const { object } = await generateObject({
      model: tollgate('sim-chat'),
      schema: z.object({ name: z.string(), population: z.number().int() }),
      prompt: 'a city',
      maxRetries: 0,
    });
    expect(object).toEqual({ name: expect.any(String), population: expect.any(Number) });
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('embed and embedMany: vectors, one record per POST', async () => {
    const { embedding } = await embed({
      model: tollgate.embeddingModel('sim-embed'),
      value: 'one text',
      maxRetries: 0,
    });
    expect(embedding.length).toBeGreaterThan(0);
    const { embeddings } = await embedMany({
      model: tollgate.embeddingModel('sim-embed'),
      values: ['first text', 'second text', 'third text'],
      maxRetries: 0,
    });
    expect(embeddings).toHaveLength(3);
    expect(embeddings.every((vector) => vector.length === embedding.length)).toBe(true);
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });
  it('default retries: an upstream failure is sent three times, three records', async () => {
    // Why `maxRetries: 0` is not optional: the AI SDK retries 5xx (and 409) twice by default,
    // and through the fetch wrapper each retry is a new request. Here the outcome is known
    // (failed); with a 502 whose outcome is unknown, a retry could pay for the work twice.
    const failure = await generateText({
      model: tollgate('sim-chat'),
      prompt: 'fail please [sim:fail=500]',
    }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ reason: 'maxRetriesExceeded' });
    expect(sent.filter((request) => request.method === 'POST')).toHaveLength(3);
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore, 'failed');
  }, 20_000);
});
