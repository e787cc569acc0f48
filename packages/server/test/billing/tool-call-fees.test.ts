import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { recordedUpstream, sendChatCompletion } from '../helpers/recorded-upstream.js';

/**
 * The fee per tool call (`per_tool_call`, docs/billing.md "Fees"). The risks: an answer's tool
 * calls billed at zero, or more than the hold covered (the answer makes more calls than were
 * held for); a plain and a streamed answer of the same calls billed differently; a request that
 * cannot call a tool (`tool_choice: "none"`, no tools) held for calls it cannot make.
 */
const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
if (simChat === undefined) throw new Error('no sim-chat in the default configuration');
const PRICES = {
  input_per_million_tokens: 2_000_000,
  output_per_million_tokens: 8_000_000,
  per_tool_call: 10_000,
};
const WEATHER = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

const CALLS = [0, 1, 2].map((index) => ({
  id: `call_${index}`,
  type: 'function',
  function: { name: 'get_weather', arguments: `{"city":"c${index}"}` },
}));

/** Answers every chat with three tool calls (plain, or streamed with its usage chunk). */
const threeCalls = () =>
  recordedUpstream((_path, body, response) =>
    sendChatCompletion(response, body, {
      message: { content: null, tool_calls: CALLS },
      deltas: CALLS.map((call, index) => ({ tool_calls: [{ index, ...call }] })),
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 100, completion_tokens: 30, total_tokens: 130 },
    }),
  );

describeEachDialect('a fee per tool call on $name', (dialect) => {
  let upstream: Awaited<ReturnType<typeof threeCalls>>;
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    upstream = await threeCalls();
    gateway = await startGateway(dialect, {
      config: testConfig({
        upstreams: {
          simulator: { kind: 'simulator' },
          three: { kind: 'openai', base_url: `${upstream.url}/v1` },
        },
        models: [
          { ...simChat, id: 'sim-tools', prices: PRICES },
          // Answers with three calls, where two are held for and billed.
          { ...simChat, id: 'three-calls', upstream: 'three', prices: PRICES, max_tool_calls: 2 },
        ],
      }),
    });
    ({ key, accountId } = await gateway.account(100_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
    await upstream.close();
  });

  const chat = async (body: Record<string, unknown>) => {
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: { max_tokens: 200, ...body },
    });
    expect(response.statusCode, response.body).toBe(200);
    return (
      await gateway.call(
        'GET',
        `/v1/requests/${String(response.headers['x-service-request-id'])}`,
        { key },
      )
    ).json<{
      usage: Record<string, number>;
      reserve: { amount: number };
      bill: {
        amount: number;
        line_items: { item: string; units: number; unit_price?: number; amount: number }[];
      };
      usage_exceeded_cap: { detail: string } | null;
    }>();
  };

  it('a tool call of the answer is billed at per_tool_call, plain and streamed alike', async () => {
    for (const stream of [false, true]) {
      const before = (await gateway.balance(accountId)).balance;
      const record = await chat({
        model: 'sim-tools',
        stream,
        tools: [WEATHER],
        messages: [{ role: 'user', content: 'call get_weather for Paris' }],
      });
      expect(record.usage['tool_calls']).toBe(1);
      const fee = record.bill.line_items.find((line) => line.item === 'tool_call');
      expect(fee).toEqual({ item: 'tool_call', units: 1, unit_price: 10_000, amount: 10_000 });
      const tokens = record.bill.line_items
        .filter((line) => line.item !== 'tool_call')
        .reduce((sum, line) => sum + line.amount, 0);
      expect(record.bill.amount).toBe(tokens + 10_000);
      expect((await gateway.balance(accountId)).balance).toBe(before - record.bill.amount);
      // The hold covered the model's max_tool_calls (16) calls.
      expect(record.reserve.amount).toBeGreaterThanOrEqual(16 * 10_000);
    }
  });

  it('no tool call, no fee; a request that cannot call one is not held for any', async () => {
    const offered = await chat({
      model: 'sim-tools',
      tools: [WEATHER],
      messages: [{ role: 'user', content: 'hello there' }],
    });
    const none = await chat({
      model: 'sim-tools',
      tools: [WEATHER],
      tool_choice: 'none',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    for (const record of [offered, none]) {
      expect(record.usage['tool_calls']).toBeUndefined();
      expect(record.bill.line_items.some((line) => line.item === 'tool_call')).toBe(false);
    }
    // Same text, same tokens: the held fee is the only difference, 16 calls of 10 000.
    expect(offered.reserve.amount - none.reserve.amount).toBe(16 * 10_000);
  });

  it('an answer with more calls than max_tool_calls is billed the bound, flagged, within the hold', async () => {
    for (const stream of [false, true]) {
      const record = await chat({
        model: 'three-calls',
        stream,
        tools: [WEATHER],
        messages: [{ role: 'user', content: 'weather in three cities' }],
      });
      expect(record.usage['tool_calls']).toBe(3);
      expect(record.bill.line_items.find((line) => line.item === 'tool_call')).toMatchObject({
        units: 2,
        amount: 20_000,
      });
      expect(record.usage_exceeded_cap?.detail).toContain(
        'tool_calls: answer made 3, billed the bound 2',
      );
      expect(record.bill.amount).toBeLessThanOrEqual(record.reserve.amount);
    }
  });
});
