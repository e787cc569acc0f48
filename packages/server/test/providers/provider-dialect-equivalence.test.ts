import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatCost } from '../../src/chat/chat-pricing.js';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ProviderDialectName } from '../../src/config/schema.js';
import { PROVIDER_DIALECTS } from '../../src/providers/openai-compatible/provider-dialects.js';
import { usageSchema } from '../../src/providers/openai-compatible/chat-schemas.js';
import { dialectUsage } from '../../src/simulator/chat-dialects.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const NAMES = Object.keys(PROVIDER_DIALECTS) as ProviderDialectName[];
const PRICES = {
  input_per_million_tokens: 2_000_000,
  cached_input_per_million_tokens: 500_000,
  output_per_million_tokens: 8_000_000,
  reasoning_per_million_tokens: 12_000_000,
};

/** A small deterministic generator (no dependency): the same cases on every run. */
function* seeded(count: number, seed = 20261205): Generator<number[]> {
  let state = seed;
  const next = (bound: number) => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state % (bound + 1);
  };
  for (let index = 0; index < count; index += 1) {
    const prompt = next(400_000);
    const completion = next(64_000);
    yield [prompt, next(prompt), completion, next(completion)];
  }
}

/**
 * The same physical usage (input, cache reads, output, reasoning), written in each provider's
 * own shape (the simulator's writer, chat-dialects.ts), read by each dialect's reader: the risk
 * is one dialect billing the same work differently, or a line item going negative.
 */
describe('provider dialects: one usage, one charge', () => {
  it('the same usage in every dialect reads the same and is charged the same, never a negative line item', () => {
    for (const [prompt = 0, cached = 0, completion = 0, reasoning = 0] of seeded(500)) {
      const openAiShape = {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: prompt + completion,
        prompt_tokens_details: { cached_tokens: cached },
        completion_tokens_details: { reasoning_tokens: reasoning },
      };
      const charges = new Set<number>();
      for (const name of NAMES) {
        // Qwen, GLM and OpenAI write OpenAI's shape; Kimi has no reasoning count.
        if (name === 'kimi' && reasoning > 0) continue;
        const raw = usageSchema.parse(dialectUsage(name, openAiShape));
        const usage = PROVIDER_DIALECTS[name].usage(raw);
        expect(usage, `${name} ${JSON.stringify(raw)}`).toEqual({
          promptTokens: prompt,
          completionTokens: completion,
          cachedTokens: cached,
          reasoningTokens: reasoning,
        });
        const cost = chatCost(usage!, PRICES);
        for (const item of cost.lineItems) expect(item.amount).toBeGreaterThanOrEqual(0);
        charges.add(cost.amount);
      }
      expect(charges.size).toBe(1);
    }
  });

  it('counts that contradict each other are refused, never billed', () => {
    const deepseek = usageSchema.parse({
      prompt_tokens: 100,
      completion_tokens: 1,
      prompt_cache_hit_tokens: 80,
      prompt_cache_miss_tokens: 80,
    });
    expect(PROVIDER_DIALECTS.deepseek.usage(deepseek)).toBeUndefined();
    const qwen = usageSchema.parse({
      prompt_tokens: 100,
      completion_tokens: 1,
      prompt_tokens_details: { cached_tokens: 60, cache_creation_input_tokens: 60 },
    });
    expect(PROVIDER_DIALECTS.qwen.usage(qwen)).toBeUndefined();
  });
});

const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
if (simChat === undefined) throw new Error('no sim-chat in the default configuration');
const [sqlite] = dialects;

/**
 * The simulator answering as each provider (`dialect` on a simulator upstream): every path runs
 * offline. Gemini's simulator refuses `stream_options`, GLM's and Gemini's streams carry usage
 * unasked, Kimi's inside the last choice: each is read and billed.
 */
describe('the simulator in each dialect, through the gateway', () => {
  let gateway: TestGateway;
  let key: string;
  beforeAll(async () => {
    gateway = await startGateway(sqlite!, {
      config: testConfig({
        upstreams: Object.fromEntries(
          NAMES.map((name) => [`sim-${name}`, { kind: 'simulator', dialect: name }]),
        ),
        models: NAMES.map((name) => ({ ...simChat, id: `${name}-chat`, upstream: `sim-${name}` })),
      }),
    });
    ({ key } = await gateway.account(100_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  for (const name of NAMES)
    it(`${name}: cache reads reported the provider's way land on the record, plain and streamed`, async () => {
      for (const stream of [false, true]) {
        const answer = await gateway.call('POST', '/v1/chat/completions', {
          key,
          body: {
            model: `${name}-chat`,
            messages: [{ role: 'user', content: `${'hello '.repeat(50)} [sim:cached_tokens=40]` }],
            stream,
          },
        });
        expect(answer.statusCode, answer.body).toBe(200);
        const record = (
          await gateway.call(
            'GET',
            `/v1/requests/${String(answer.headers['x-service-request-id'])}`,
            { key },
          )
        ).json<{ status: string; usage: Record<string, number> }>();
        expect(record.status).toBe('succeeded');
        expect(record.usage['cached_tokens']).toBe(40);
      }
    });
});
