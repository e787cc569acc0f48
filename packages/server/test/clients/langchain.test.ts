import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { tollgateChat, tollgateEmbeddings } from './recipes/langchain-models.js';
import {
  countRecords,
  expectOneRecordPerPost,
  observingFetch,
  type SentRequest,
} from './sent-requests.js';

const [sqlite] = dialects;

/**
 * Risk: LangChain JS (`@langchain/openai`), unchanged, double-sends or fails against the
 * gateway. Each call goes through the recipe of docs/clients.md (a fetch wrapper with a new
 * Idempotency-Key per POST, `maxRetries: 0`) and must give the user the answer and leave
 * exactly one record per request sent.
 */
describe('LangChain JS through the docs/clients.md recipe', () => {
  let gateway: TestGateway;
  let baseURL: string;
  let key: string;
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
    recordsBefore = await countRecords(gateway);
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const chat = () =>
    tollgateChat({ baseURL, apiKey: key, model: 'sim-chat', fetch: observingFetch(sent) });

  const weather = {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
      },
    },
  } as const;

  it('invoke: the reply, one record', async () => {
    const reply = await chat().invoke('hello langchain');
    expect(reply.content).toBe('Simulated reply to: hello langchain');
    expect(reply).toMatchObject({ usage_metadata: { total_tokens: expect.any(Number) } });
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('stream: the reply in chunks, one record', async () => {
    let text = '';
    let chunks = 0;
    for await (const chunk of await chat().stream('stream it')) {
      text += typeof chunk.content === 'string' ? chunk.content : '';
      chunks += 1;
    }
    expect(text).toBe('Simulated reply to: stream it');
    expect(chunks).toBeGreaterThan(1);
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('bindTools: a tool call, then its continuation, one record per call', async () => {
    const model = chat().bindTools([weather]);
    const question = new HumanMessage('use get_weather for Paris');
    const first = await model.invoke([question]);
    const call = first.tool_calls?.[0];
    expect(call).toMatchObject({ name: 'get_weather', args: { city: expect.any(String) } });
    const second = await model.invoke([
      question,
      first,
      new ToolMessage({ tool_call_id: call?.id ?? '', content: 'sunny, 21 C' }),
    ]);
    expect(second).toBeInstanceOf(AIMessage);
    expect(second.content).toContain('sunny, 21 C');
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('withStructuredOutput: the parsed object', async () => {
    const city = await chat()
      .withStructuredOutput(z.object({ name: z.string(), population: z.number().int() }), {
        name: 'city',
      })
      .invoke('a city');
    expect(city).toEqual({ name: expect.any(String), population: expect.any(Number) });
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });

  it('OpenAIEmbeddings: embedQuery and embedDocuments, one record per POST', async () => {
    const embeddings = tollgateEmbeddings({
      baseURL,
      apiKey: key,
      model: 'sim-embed',
      fetch: observingFetch(sent),
    });
    const query = await embeddings.embedQuery('one text');
    expect(query.length).toBeGreaterThan(0);
    const documents = await embeddings.embedDocuments(['first text', 'second text']);
    expect(documents).toHaveLength(2);
    expect(documents.every((vector) => vector.length === query.length)).toBe(true);
    await expectOneRecordPerPost(gateway, key, sent, recordsBefore);
  });
});
