import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatCost } from '../../src/chat/chat-pricing.js';
import type { ChatUsage } from '../../src/chat/chat-types.js';
import { defaultConfig } from '../../src/config/default-config.js';
import type { TokenPrices } from '../../src/config/schema.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const [sqlite] = dialects;
const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
if (simChat === undefined) throw new Error('no sim-chat in the default configuration');

/** sim-chat's prices, with a flex tier at half of them and a priority tier at double. */
const PRICES: TokenPrices = {
  ...simChat.prices,
  service_tiers: {
    flex: {
      input_per_million_tokens: (simChat.prices.input_per_million_tokens ?? 0) / 2,
      output_per_million_tokens: (simChat.prices.output_per_million_tokens ?? 0) / 2,
    },
    priority: {
      input_per_million_tokens: (simChat.prices.input_per_million_tokens ?? 0) * 2,
      output_per_million_tokens: (simChat.prices.output_per_million_tokens ?? 0) * 2,
    },
  },
};

interface RecordBody {
  status: string;
  usage: { prompt_tokens: number; completion_tokens: number };
  bill: { amount: number; pricing_rule: string } | null;
}

/**
 * Risk: a request an OpenAI-compatible upstream served on its flex tier billed at the standard
 * prices (the caller overcharged), or on its priority tier at the standard prices (the operator
 * pays the difference): the served `service_tier` of the answer — top level in a plain answer,
 * on every chunk of a stream — was not read, so every request was billed at the base prices.
 * The providers' names of their standard tier (`default`, `standard`) are the base prices. The
 * same through an Anthropic Messages upstream, which reports the tier in `usage.service_tier`,
 * and through an OpenAI Responses upstream, which reports it on the response object (the plain
 * answer, and `response.completed` of a stream, whose `response.created` names `auto`).
 */
describe('the service tier an upstream reports it served on is billed as served', () => {
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    gateway = await startGateway(sqlite, {
      config: testConfig({
        upstreams: {
          ...defaultConfig.upstreams,
          anthropic: { kind: 'simulator', chat_api: 'messages' },
          responses: { kind: 'simulator', chat_api: 'responses' },
        },
        models: [
          ...defaultConfig.models,
          { ...simChat, id: 'tiered-chat', prices: PRICES },
          { ...simChat, id: 'tiered-claude', upstream: 'anthropic', prices: PRICES },
          { ...simChat, id: 'tiered-codex', upstream: 'responses', prices: PRICES },
        ],
      }),
    });
    ({ key, accountId } = await gateway.account(1_000_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  async function served(tier: string | undefined, stream: boolean, model = 'tiered-chat') {
    const before = (await gateway.balance(accountId)).balance;
    const directive = tier === undefined ? '' : ` [sim:service_tier=${tier}]`;
    const answer = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: {
        model,
        stream,
        messages: [{ role: 'user', content: `hello there${directive}` }],
      },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    const id = String(answer.headers['x-service-request-id']);
    const record = (await gateway.call('GET', `/v1/requests/${id}`, { key })).json<RecordBody>();
    expect(record.status).toBe('succeeded');
    expect((await gateway.balance(accountId)).balance).toBe(before - (record.bill?.amount ?? 0));
    return record;
  }

  const billAt = (record: RecordBody, serviceTier?: string) => {
    const usage: ChatUsage = {
      promptTokens: record.usage.prompt_tokens,
      completionTokens: record.usage.completion_tokens,
      cachedTokens: 0,
      reasoningTokens: 0,
      ...(serviceTier === undefined ? {} : { serviceTier }),
    };
    return chatCost(usage, PRICES).amount;
  };

  for (const stream of [false, true]) {
    const how = stream ? 'streamed' : 'plain';
    it(`${how}: flex at the flex prices, priority at the priority prices`, async () => {
      const flex = await served('flex', stream);
      expect(flex.bill?.amount).toBe(billAt(flex, 'flex'));
      expect(flex.bill?.amount).toBeLessThan(billAt(flex));
      expect(flex.bill?.pricing_rule).toMatch(/(^|; )chat \(service tier flex\): /);
      const priority = await served('priority', stream);
      expect(priority.bill?.amount).toBe(billAt(priority, 'priority'));
      expect(priority.bill?.amount).toBeGreaterThan(billAt(priority));
    });

    it(`${how}: no tier named, or the standard tier (default), at the base prices`, async () => {
      for (const tier of [undefined, 'default']) {
        const record = await served(tier, stream);
        expect(record.bill?.amount).toBe(billAt(record));
        expect(record.bill?.pricing_rule).toMatch(/(^|; )chat: /);
      }
    });
  }

  for (const stream of [false, true]) {
    const how = stream ? 'streamed' : 'plain';
    it(`an Anthropic upstream, ${how}: priority at the priority prices, standard at the base prices`, async () => {
      const priority = await served('priority', stream, 'tiered-claude');
      expect(priority.bill?.amount).toBe(billAt(priority, 'priority'));
      expect(priority.bill?.amount).toBeGreaterThan(billAt(priority));
      expect(priority.bill?.pricing_rule).toMatch(/(^|; )chat \(service tier priority\): /);
      const standard = await served(undefined, stream, 'tiered-claude');
      expect(standard.bill?.amount).toBe(billAt(standard));
      expect(standard.bill?.pricing_rule).toMatch(/(^|; )chat: /);
    });
  }

  for (const stream of [false, true]) {
    const how = stream ? 'streamed' : 'plain';
    it(`a Responses upstream, ${how}: flex and priority at their prices, default at the base prices`, async () => {
      const flex = await served('flex', stream, 'tiered-codex');
      expect(flex.bill?.amount).toBe(billAt(flex, 'flex'));
      expect(flex.bill?.amount).toBeLessThan(billAt(flex));
      expect(flex.bill?.pricing_rule).toMatch(/(^|; )chat \(service tier flex\): /);
      const priority = await served('priority', stream, 'tiered-codex');
      expect(priority.bill?.amount).toBe(billAt(priority, 'priority'));
      expect(priority.bill?.amount).toBeGreaterThan(billAt(priority));
      for (const tier of [undefined, 'default']) {
        const record = await served(tier, stream, 'tiered-codex');
        expect(record.bill?.amount).toBe(billAt(record));
        expect(record.bill?.pricing_rule).toMatch(/(^|; )chat: /);
      }
    });
  }
});
