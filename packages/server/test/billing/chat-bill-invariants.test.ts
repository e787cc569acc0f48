import type { BillLineItem } from '@tollgate/protocol';
import { describe, expect, it } from 'vitest';
import { credibleChatUsage } from '../../src/chat/credible-usage.js';
import { chatCost, chatReserve, worstCaseInputTokens } from '../../src/chat/chat-pricing.js';
import type { ChatRequest, ChatUsage } from '../../src/chat/chat-types.js';
import { validateChat } from '../../src/chat/validate-chat.js';
import { parseConfig } from '../../src/config/load.js';
import { tokenPricesSchema } from '../../src/config/price-schema.js';
import type { TokenPrices } from '../../src/config/schema.js';
import { testConfig } from '../helpers/gateway.js';

/**
 * Risk: some combination of prices and usage nobody wrote an example for — a tier just reached,
 * a service tier without a field, a request made only of cache writes — gives a negative line
 * item, a total that is not the sum of its items (a bill nobody can recompute from the record),
 * or a capture above the hold (the caller charged more than was reserved, with no usage beyond
 * the request's caps to explain it). A seeded loop (fast-check is not a dependency): thousands
 * of random price lists and usages, the same ones on every run; a failure prints its seed case.
 */

/** mulberry32: a small seeded generator, so every run draws the same cases. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    int,
    chance: (p: number) => next() < p,
    pick: <T>(items: readonly T[]) => items[int(0, items.length - 1)] as T,
  };
}
type Random = ReturnType<typeof generator>;

const FIELDS = [
  'input_per_million_tokens',
  'output_per_million_tokens',
  'reasoning_per_million_tokens',
  'cached_input_per_million_tokens',
  'cache_write_per_million_tokens',
  'cache_write_1h_per_million_tokens',
  'audio_input_per_million_tokens',
  'image_input_per_million_tokens',
  'audio_output_per_million_tokens',
  'image_output_per_million_tokens',
] as const;

/** Some of the six fields, each a price from 0 to 500 yuan per million tokens. */
function someFields(random: Random, keep: number): Record<string, number> {
  return Object.fromEntries(
    FIELDS.filter(() => random.chance(keep)).map((field) => [
      field,
      random.pick([0, 1, random.int(1, 999), random.int(1, 500_000_000)]),
    ]),
  );
}

/** Up to three ascending tiers below `ceiling`. */
function someTiers(random: Random, ceiling: number) {
  if (random.chance(0.4)) return {};
  const count = random.int(1, 3);
  let above = 0;
  const tiers = [];
  for (let index = 0; index < count; index += 1) {
    above += random.int(1, Math.max(1, Math.floor(ceiling / count)));
    tiers.push({ above_input_tokens: above, prices: someFields(random, 0.5) });
  }
  return { tiers };
}

function somePrices(random: Random, ceiling: number): TokenPrices {
  const prices = {
    input_per_million_tokens: random.int(0, 100_000_000),
    ...someFields(random, 0.6),
    ...someTiers(random, ceiling),
    ...(random.chance(0.3) ? { per_request: random.int(1, 100_000) } : {}),
    ...(random.chance(0.4)
      ? {
          service_tiers: {
            flex: { ...someFields(random, 0.5), ...someTiers(random, ceiling) },
            priority: { ...someFields(random, 0.5), ...someTiers(random, ceiling) },
          },
        }
      : {}),
  };
  // Every drawn price list is one the configuration would take.
  return tokenPricesSchema.parse(prices);
}

/** A usage within the caps: at most `maxInput` input tokens split four ways, at most `maxOutput` output. */
function someUsage(random: Random, maxInput: number, maxOutput: number): ChatUsage {
  const promptTokens = random.pick([maxInput, random.int(0, maxInput)]);
  let left = promptTokens;
  const part = () => {
    const taken = random.pick([0, left, random.int(0, left)]);
    left -= taken;
    return taken;
  };
  const cachedTokens = part();
  const cacheWriteTokens = part();
  const cacheWrite1hTokens = part();
  const completionTokens = random.pick([maxOutput, random.int(0, maxOutput)]);
  const reasoningTokens = random.int(0, completionTokens);
  // Audio and image input anywhere in the input (they may overlap the cache reads); audio and
  // image output within what reasoning leaves of the output.
  const audioInputTokens = random.int(0, promptTokens);
  const imageInputTokens = random.int(0, promptTokens - audioInputTokens);
  const audioOutputTokens = random.int(0, completionTokens - reasoningTokens);
  const imageOutputTokens = random.int(0, completionTokens - reasoningTokens - audioOutputTokens);
  return {
    promptTokens,
    cachedTokens,
    completionTokens,
    reasoningTokens,
    ...(random.chance(0.8) ? { cacheWriteTokens } : {}),
    ...(random.chance(0.5) ? { cacheWrite1hTokens } : {}),
    ...(random.chance(0.4) ? { audioInputTokens } : {}),
    ...(random.chance(0.4) ? { imageInputTokens } : {}),
    ...(random.chance(0.4) ? { audioOutputTokens } : {}),
    ...(random.chance(0.4) ? { imageOutputTokens } : {}),
    ...(random.chance(0.5) ? { serviceTier: random.pick(['flex', 'priority', 'standard']) } : {}),
  };
}

/** Each item recomputed from itself alone, never negative. */
function expectRecomputable(items: readonly BillLineItem[]): void {
  for (const item of items) {
    expect(item.units).toBeGreaterThan(0);
    expect(item.amount).toBeGreaterThanOrEqual(0);
    const expected =
      'price_per_million' in item
        ? Number((BigInt(item.units) * BigInt(item.price_per_million) + 999_999n) / 1_000_000n)
        : item.units * item.unit_price;
    expect(item.amount).toBe(expected);
  }
}

const sum = (items: readonly BillLineItem[]) =>
  items.reduce((total, item) => total + item.amount, 0);

const model = (() => {
  const found = parseConfig(
    testConfig({
      models: [
        {
          id: 'm',
          upstream: 'simulator',
          families: ['chat'],
          prices: { input_per_million_tokens: 1 },
        },
      ],
    }),
    'test',
  ).models[0];
  if (found === undefined) throw new Error('no model');
  return found;
})();
const base = validateChat({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, model);
const overhead = worstCaseInputTokens(base, model) - base.textBytes;
/** A request whose worst case is `maxInput` input tokens and whose output cap is `maxOutput`. */
const requestOf = (maxInput: number, maxOutput: number): ChatRequest => ({
  ...base,
  textBytes: maxInput - overhead,
  maxOutputTokens: maxOutput,
});

const CASES = 3_000;

describe('every chat bill, over random prices and usages', () => {
  it('has no negative line item, each recomputable, and a total that is their sum', () => {
    const random = generator(20_240_601);
    for (let index = 0; index < CASES; index += 1) {
      const prices = somePrices(random, 300_000);
      const usage = someUsage(random, random.int(0, 400_000), random.int(0, 64_000));
      const bill = chatCost(usage, prices);
      expectRecomputable(bill.lineItems);
      expect(bill.amount, JSON.stringify({ index, usage })).toBe(sum(bill.lineItems));
    }
  });

  it('even for a report whose parts exceed their totals (an inconsistent upstream)', () => {
    const random = generator(7);
    for (let index = 0; index < CASES; index += 1) {
      const prices = somePrices(random, 1_000);
      const usage: ChatUsage = {
        promptTokens: random.int(0, 1_000),
        cachedTokens: random.int(0, 1_000),
        cacheWriteTokens: random.int(0, 1_000),
        cacheWrite1hTokens: random.int(0, 1_000),
        completionTokens: random.int(0, 1_000),
        reasoningTokens: random.int(0, 1_000),
      };
      const bill = chatCost(usage, prices);
      expectRecomputable(bill.lineItems);
      expect(bill.amount).toBe(sum(bill.lineItems));
    }
  });

  it('never captures more than the hold for any usage within the caps, tiers and service tiers included', () => {
    const random = generator(1_234_567);
    for (let index = 0; index < CASES; index += 1) {
      const maxInput = random.int(overhead, 400_000);
      const maxOutput = random.int(1, 64_000);
      const prices = somePrices(random, 2 * maxInput);
      const hold = chatReserve(requestOf(maxInput, maxOutput), model, prices);
      for (let draw = 0; draw < 5; draw += 1) {
        const usage = someUsage(random, maxInput, maxOutput);
        const capture = chatCost(usage, prices).amount;
        expect(capture, JSON.stringify({ index, prices, usage, hold })).toBeLessThanOrEqual(hold);
      }
    }
  });

  it('the rounding margin is exactly enough: six line items of one token each at 1 micro-yuan per million', () => {
    // Every item rounds 0.000001 up to 1: the capture is 6. The hold rounds its one input item
    // and its one output item up to 1 each, + 4 for the four extra items: 6, not a micro-yuan to spare.
    const ones = tokenPricesSchema.parse({
      input_per_million_tokens: 1,
      output_per_million_tokens: 1,
    });
    const maxInput = overhead + 3;
    const hold = chatReserve(requestOf(maxInput, 2), model, ones);
    const capture = chatCost(
      {
        promptTokens: maxInput,
        cachedTokens: 1,
        cacheWriteTokens: 1,
        cacheWrite1hTokens: 1,
        completionTokens: 2,
        reasoningTokens: 1,
      },
      ones,
    );
    expect(capture.lineItems).toHaveLength(6);
    expect(capture.amount).toBe(6);
    expect(hold).toBe(6);
  });

  it('and with audio and image priced apart: ten line items of one token each, ten micro-yuan held', () => {
    const ones = tokenPricesSchema.parse({
      input_per_million_tokens: 1,
      output_per_million_tokens: 1,
      audio_input_per_million_tokens: 1,
      image_input_per_million_tokens: 1,
      audio_output_per_million_tokens: 1,
      image_output_per_million_tokens: 1,
    });
    const maxInput = overhead + 6;
    const hold = chatReserve(requestOf(maxInput, 4), model, ones);
    const capture = chatCost(
      {
        promptTokens: maxInput,
        cachedTokens: 1,
        cacheWriteTokens: 1,
        cacheWrite1hTokens: 1,
        audioInputTokens: 1,
        imageInputTokens: 1,
        completionTokens: 4,
        reasoningTokens: 1,
        audioOutputTokens: 1,
        imageOutputTokens: 1,
      },
      ones,
    );
    expect(capture.lineItems).toHaveLength(10);
    expect(capture.amount).toBe(10);
    expect(hold).toBe(10);
  });

  it("nor, cut to the caps, for an inconsistent report within them (the caller's bill)", () => {
    const random = generator(99);
    for (let index = 0; index < CASES; index += 1) {
      const maxInput = random.int(overhead, 50_000);
      const maxOutput = random.int(1, 8_000);
      const prices = somePrices(random, 2 * maxInput);
      const hold = chatReserve(requestOf(maxInput, maxOutput), model, prices);
      const reported: ChatUsage = {
        promptTokens: random.int(0, maxInput),
        cachedTokens: random.int(0, maxInput),
        cacheWriteTokens: random.int(0, maxInput),
        cacheWrite1hTokens: random.int(0, maxInput),
        completionTokens: random.int(0, maxOutput),
        reasoningTokens: random.int(0, maxOutput),
      };
      const billed = credibleChatUsage(reported, {
        inputUpperEstimate: maxInput,
        outputCap: maxOutput,
      }).billed;
      expect(
        chatCost(billed, prices).amount,
        JSON.stringify({ index, reported }),
      ).toBeLessThanOrEqual(hold);
    }
  });
});
