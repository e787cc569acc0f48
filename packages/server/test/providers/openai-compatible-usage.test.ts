import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatCost } from '../../src/chat/chat-pricing.js';
import { defaultConfig } from '../../src/config/default-config.js';
import { dialects } from '../helpers/dialects.js';
import { recordedUpstream } from '../helpers/recorded-upstream.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const [sqlite] = dialects;
/** Long enough that the usage the upstream reports is within what the gateway finds credible. */
const PROMPT = 'hello '.repeat(1_000);
const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
if (simChat === undefined) throw new Error('no sim-chat in the default configuration');

/** DeepSeek's usage: cache hits and misses in fields of its own, `prompt_tokens` counting both. */
const DEEPSEEK_USAGE = {
  prompt_tokens: 1_200,
  completion_tokens: 100,
  total_tokens: 1_300,
  prompt_cache_hit_tokens: 1_000,
  prompt_cache_miss_tokens: 200,
};

/**
 * An upstream answering as DeepSeek and Moonshot Kimi document it: DeepSeek's usage (plain and in
 * the usage chunk), Kimi's stream usage inside the last chunk's `choices[0].usage`.
 */
async function providerUpstream(): Promise<{ url: string; close: () => Promise<void> }> {
  const upstream = await recordedUpstream((path, received, response) => {
    const body = received as { model: string; stream?: boolean };
    const base = { id: 'cmpl-1', object: 'chat.completion', created: 1_700_000_000 };
    if (body.stream !== true) {
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          ...base,
          model: body.model,
          choices: [
            { index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' },
          ],
          usage: DEEPSEEK_USAGE,
        }),
      );
      return;
    }
    response.setHeader('content-type', 'text/event-stream');
    const send = (data: unknown) => response.write(`data: ${JSON.stringify(data)}\n\n`);
    const chunk = { ...base, object: 'chat.completion.chunk', model: body.model };
    send({ ...chunk, choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' } }] });
    if (body.model === 'kimi')
      send({
        ...chunk,
        choices: [
          {
            index: 0,
            delta: {},
            finish_reason: 'stop',
            usage: { prompt_tokens: 61, completion_tokens: 9, total_tokens: 70 },
          },
        ],
      });
    else {
      send({ ...chunk, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
      send({ ...chunk, choices: [], usage: DEEPSEEK_USAGE });
    }
    response.end('data: [DONE]\n\n');
  });
  return { url: `${upstream.url}/v1`, close: upstream.close };
}

/**
 * Found (issue 34): a DeepSeek answer with 1,000 cache-hit and 200 cache-miss input tokens was
 * billed as 1,200 uncached tokens; a Kimi stream whose usage came in `choices[0].usage` streamed
 * its answer, then ended `submission_unknown` with its hold kept for an operator. Both are read
 * now, and billed exactly.
 */
describe("OpenAI-compatible providers' own usage fields", () => {
  let gateway: TestGateway;
  let key: string;
  let upstream: Awaited<ReturnType<typeof providerUpstream>>;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    upstream = await providerUpstream();
    const model = (id: string) => ({ ...simChat, id, upstream: 'provider', upstream_model: id });
    gateway = await startGateway(sqlite, {
      config: testConfig({
        upstreams: {
          ...defaultConfig.upstreams,
          provider: { kind: 'openai', base_url: upstream.url },
        },
        models: [...defaultConfig.models, model('deepseek'), model('kimi')],
      }),
    });
    ({ key } = await gateway.account(1_000_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
    await upstream.close();
  });

  const recordOf = async (answer: { headers: Record<string, unknown> }) =>
    (
      await gateway.call('GET', `/v1/requests/${String(answer.headers['x-service-request-id'])}`, {
        key,
      })
    ).json<{ status: string; usage: Record<string, number>; bill: { amount: number } | null }>();
  const expected = (usage: {
    promptTokens: number;
    completionTokens: number;
    cachedTokens: number;
  }) => chatCost({ ...usage, reasoningTokens: 0 }, simChat.prices).amount;

  it('DeepSeek: cache hits billed at the cached price, plain and streamed', async () => {
    for (const stream of [false, true]) {
      const answer = await gateway.call('POST', '/v1/chat/completions', {
        key,
        body: { model: 'deepseek', stream, messages: [{ role: 'user', content: PROMPT }] },
      });
      expect(answer.statusCode, answer.body).toBe(200);
      const record = await recordOf(answer);
      expect(record.status).toBe('succeeded');
      expect(record.usage).toMatchObject({ prompt_tokens: 1_200, cached_tokens: 1_000 });
      // 200 uncached + 1,000 cached at a quarter of the input price + 100 output.
      expect(record.bill?.amount).toBe(
        expected({ promptTokens: 1_200, completionTokens: 100, cachedTokens: 1_000 }),
      );
      expect(record.bill?.amount).toBeLessThan(
        expected({ promptTokens: 1_200, completionTokens: 100, cachedTokens: 0 }),
      );
    }
  });

  it("Kimi: a stream's usage in its last choice is read, billed, and not passed on inside the choice", async () => {
    const answer = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: {
        model: 'kimi',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: PROMPT }],
      },
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toContain('data: [DONE]');
    const record = await recordOf(answer);
    expect(record.status).toBe('succeeded');
    expect(record.usage).toMatchObject({ prompt_tokens: 61, completion_tokens: 9 });
    expect(record.bill?.amount).toBe(
      expected({ promptTokens: 61, completionTokens: 9, cachedTokens: 0 }),
    );
    for (const frame of answer.body.split('\n\n').filter((line) => line.startsWith('data: {'))) {
      const chunk = JSON.parse(frame.slice('data: '.length)) as { choices: object[] };
      for (const choice of chunk.choices) expect(choice).not.toHaveProperty('usage');
    }
  });
});
