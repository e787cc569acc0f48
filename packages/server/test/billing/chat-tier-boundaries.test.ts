import type { BillLineItem } from '@tollgate/protocol';
import { describe, expect, it } from 'vitest';
import { chatCost, chatReserve, worstCaseInputTokens } from '../../src/chat/chat-pricing.js';
import type { ChatRequest, ChatUsage } from '../../src/chat/chat-types.js';
import { validateChat } from '../../src/chat/validate-chat.js';
import { parseConfig } from '../../src/config/load.js';
import type { ModelConfig, TokenPrices } from '../../src/config/schema.js';
import { testConfig } from '../helpers/gateway.js';

/**
 * Risk: a long request billed at the short-context price (the provider charges the operator
 * double), a request of exactly the threshold billed at the long-context price (the caller
 * overcharged: 200,000 is not above 200,000), only the tokens past the threshold repriced
 * instead of the whole request, or a hold taken at the short price for a request that can reach
 * the long one. Figures computed by hand in micro-yuan, each line `ceil(units x price / 1e6)`.
 */

/** Sonnet 4.5 with its long-context prices above 200,000 input tokens ($6 / $22.50, x 7.2). */
const LONG_CONTEXT: TokenPrices = {
  input_per_million_tokens: 21_600_000,
  cached_input_per_million_tokens: 2_160_000,
  cache_write_per_million_tokens: 27_000_000,
  cache_write_1h_per_million_tokens: 43_200_000,
  output_per_million_tokens: 108_000_000,
  tiers: [
    {
      above_input_tokens: 200_000,
      prices: {
        input_per_million_tokens: 43_200_000,
        cached_input_per_million_tokens: 4_320_000,
        cache_write_per_million_tokens: 54_000_000,
        cache_write_1h_per_million_tokens: 86_400_000,
        output_per_million_tokens: 162_000_000,
      },
    },
  ],
};

/** A token item's price per million (a fee has none). */
const perMillion = (item: BillLineItem | undefined) =>
  item !== undefined && 'price_per_million' in item ? item.price_per_million : undefined;

const plain = (promptTokens: number, completionTokens: number): ChatUsage => ({
  promptTokens,
  completionTokens,
  cachedTokens: 0,
  reasoningTokens: 0,
});

describe('a whole-request tier by input length', () => {
  it('199,999 input tokens: the base prices', () => {
    // input 199,999 x 21.6 = 4,319,978.4 -> 4,319,979; output 1,000 x 108 = 108,000.
    const bill = chatCost(plain(199_999, 1_000), LONG_CONTEXT);
    expect(bill.lineItems).toEqual([
      { item: 'input', units: 199_999, price_per_million: 21_600_000, amount: 4_319_979 },
      { item: 'output', units: 1_000, price_per_million: 108_000_000, amount: 108_000 },
    ]);
    expect(bill.amount).toBe(4_427_979);
    expect(bill.rule).toMatch(/^chat: /);
  });

  it('200,000 input tokens: still the base prices (200,000 is not above 200,000)', () => {
    // input 200,000 x 21.6 = 4,320,000; output 108,000.
    const bill = chatCost(plain(200_000, 1_000), LONG_CONTEXT);
    expect(bill.lineItems.map((item) => item.amount)).toEqual([4_320_000, 108_000]);
    expect(bill.amount).toBe(4_428_000);
  });

  it('200,001 input tokens: the whole request at the tier, output included', () => {
    // input 200,001 x 43.2 = 8,640,043.2 -> 8,640,044; output 1,000 x 162 = 162,000.
    const bill = chatCost(plain(200_001, 1_000), LONG_CONTEXT);
    expect(bill.lineItems).toEqual([
      { item: 'input', units: 200_001, price_per_million: 43_200_000, amount: 8_640_044 },
      { item: 'output', units: 1_000, price_per_million: 162_000_000, amount: 162_000 },
    ]);
    expect(bill.amount).toBe(8_802_044);
    expect(bill.rule).toMatch(/^chat \(tier above 200000 input tokens\): /);
  });

  it('the tier is chosen by every input token, cache reads and writes included, and prices them all', () => {
    // 50,001 uncached + 150,000 read = 200,001 input tokens: the tier.
    //   input 50,001 x 43.2 = 2,160,043.2 -> 2,160,044; cache read 150,000 x 4.32 = 648,000;
    //   output 1,000 x 162 = 162,000: 2,970,044.
    const bill = chatCost(
      { promptTokens: 200_001, cachedTokens: 150_000, completionTokens: 1_000, reasoningTokens: 0 },
      LONG_CONTEXT,
    );
    expect(bill.lineItems.map((item) => [item.item, perMillion(item), item.amount])).toEqual([
      ['input', 43_200_000, 2_160_044],
      ['cache_read', 4_320_000, 648_000],
      ['output', 162_000_000, 162_000],
    ]);
    expect(bill.amount).toBe(2_970_044);
  });

  it("a field a tier leaves out takes the base's value, then the usual default", () => {
    const prices: TokenPrices = {
      input_per_million_tokens: 1_000_000,
      cached_input_per_million_tokens: 100_000,
      output_per_million_tokens: 4_000_000,
      tiers: [{ above_input_tokens: 10, prices: { input_per_million_tokens: 2_000_000 } }],
    };
    const usage: ChatUsage = {
      promptTokens: 1_000_000,
      cachedTokens: 500_000,
      cacheWriteTokens: 100_000,
      completionTokens: 1_000_000,
      reasoningTokens: 250_000,
    };
    // Tier input 2; cache read the base's 0.1; cache write not given anywhere: the tier's input
    // 2; output and reasoning the base's 4.
    expect(chatCost(usage, prices).lineItems.map((item) => [item.item, perMillion(item)])).toEqual([
      ['input', 2_000_000],
      ['cache_read', 100_000],
      ['cache_write', 2_000_000],
      ['output', 4_000_000],
      ['reasoning', 4_000_000],
    ]);
  });

  it('of several tiers, the highest one the input is above', () => {
    const prices: TokenPrices = {
      input_per_million_tokens: 1_000_000,
      output_per_million_tokens: 1_000_000,
      tiers: [
        { above_input_tokens: 100, prices: { input_per_million_tokens: 2_000_000 } },
        { above_input_tokens: 1_000, prices: { input_per_million_tokens: 3_000_000 } },
      ],
    };
    const inputPrice = (tokens: number) =>
      perMillion(chatCost(plain(tokens, 0), prices).lineItems[0]);
    expect([100, 101, 1_000, 1_001].map(inputPrice)).toEqual([
      1_000_000, 2_000_000, 2_000_000, 3_000_000,
    ]);
  });
});

describe('the hold reaches the dearest tier the request can reach', () => {
  const model: ModelConfig = (() => {
    const config = parseConfig(
      testConfig({
        models: [
          {
            id: 'long',
            upstream: 'simulator',
            families: ['chat'],
            prices: LONG_CONTEXT,
            max_output_tokens: 1_000,
          },
        ],
      }),
      'test',
    );
    const found = config.models[0];
    if (found === undefined) throw new Error('no model');
    return found;
  })();
  /** A one-message request whose worst-case input is exactly `worstCase` tokens. */
  const requestOf = (worstCase: number): ChatRequest => {
    const request = validateChat(
      { model: 'long', messages: [{ role: 'user', content: 'x' }] },
      model,
    );
    const overhead = worstCaseInputTokens(request, model) - request.textBytes;
    return { ...request, textBytes: worstCase - overhead };
  };

  it('a worst case of 200,000 input tokens cannot be above 200,000: the base prices', () => {
    const request = requestOf(200_000);
    expect(worstCaseInputTokens(request, model)).toBe(200_000);
    // Every input token at the dearest input-side base price (1-hour writes, 43.2):
    //   200,000 x 43.2 = 8,640,000; the output cap 1,000 x 108 = 108,000; + 4 for rounding.
    expect(chatReserve(request, model, LONG_CONTEXT)).toBe(8_748_004);
  });

  it('a worst case of 200,001 can: the tier prices', () => {
    // 200,001 x 86.4 (the tier's 1-hour writes) = 17,280,086.4 -> 17,280,087; 1,000 x 162 =
    // 162,000; + 4: 17,442,091.
    expect(chatReserve(requestOf(200_001), model, LONG_CONTEXT)).toBe(17_442_091);
  });

  it('the hold is never below the capture at the boundaries, whatever the split of the input', () => {
    for (const worstCase of [199_999, 200_000, 200_001]) {
      const hold = chatReserve(requestOf(worstCase), model, LONG_CONTEXT);
      for (const usage of [
        plain(worstCase, 1_000),
        { ...plain(worstCase, 1_000), cacheWrite1hTokens: worstCase },
        { ...plain(worstCase, 1_000), cachedTokens: worstCase - 1, cacheWriteTokens: 1 },
      ])
        expect(chatCost(usage, LONG_CONTEXT).amount).toBeLessThanOrEqual(hold);
    }
  });
});
