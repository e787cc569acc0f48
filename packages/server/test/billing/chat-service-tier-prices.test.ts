import { describe, expect, it } from 'vitest';
import { chatReserve, chatCost } from '../../src/chat/chat-pricing.js';
import type { ChatUsage } from '../../src/chat/chat-types.js';
import { validateChat } from '../../src/chat/validate-chat.js';
import { parseConfig } from '../../src/config/load.js';
import type { TokenPrices } from '../../src/config/schema.js';
import { testConfig } from '../helpers/gateway.js';

/**
 * Risk: a request the upstream served on its priority tier billed at the standard price (the
 * operator pays the difference), a flex request billed at the standard price (the caller
 * overcharged), a served tier the prices do not name billed at some other table, or a hold that
 * covers only the tier the caller asked for when the upstream may serve another. Hand-computed
 * micro-yuan, each line `ceil(units x price / 1e6)`.
 */

/** GPT-5-style prices: flex half, priority double, each with its own long-context tier. */
const PRICES: TokenPrices = {
  input_per_million_tokens: 9_000_000,
  cached_input_per_million_tokens: 900_000,
  output_per_million_tokens: 72_000_000,
  tiers: [{ above_input_tokens: 272_000, prices: { input_per_million_tokens: 18_000_000 } }],
  service_tiers: {
    flex: { input_per_million_tokens: 4_500_000, output_per_million_tokens: 36_000_000 },
    priority: {
      input_per_million_tokens: 18_000_000,
      cached_input_per_million_tokens: 1_800_000,
      output_per_million_tokens: 144_000_000,
      tiers: [{ above_input_tokens: 272_000, prices: { input_per_million_tokens: 36_000_000 } }],
    },
  },
};

const usage = (serviceTier?: string, promptTokens = 10_000): ChatUsage => ({
  promptTokens,
  cachedTokens: 2_000,
  completionTokens: 1_000,
  reasoningTokens: 0,
  ...(serviceTier === undefined ? {} : { serviceTier }),
});

describe('the served service tier is billed as served', () => {
  it('no service tier reported: the base prices', () => {
    // input 8,000 x 9 = 72,000; cache read 2,000 x 0.9 = 1,800; output 1,000 x 72 = 72,000.
    expect(chatCost(usage(), PRICES).amount).toBe(145_800);
  });

  it("flex: its prices, and the base's cache-read price it leaves out", () => {
    // input 8,000 x 4.5 = 36,000; cache read 2,000 x 0.9 = 1,800 (base); output 1,000 x 36 = 36,000.
    const bill = chatCost(usage('flex'), PRICES);
    expect(bill.amount).toBe(73_800);
    expect(bill.rule).toMatch(/^chat \(service tier flex\): /);
  });

  it('priority: its prices, and its own length tier, not the base one', () => {
    // input 8,000 x 18 = 144,000; cache read 2,000 x 1.8 = 3,600; output 1,000 x 144 = 144,000.
    expect(chatCost(usage('priority'), PRICES).amount).toBe(291_600);
    // Above 272,000: priority's tier input 36 (the base's tier says 18):
    //   input 298,000 x 36 = 10,728,000; cache read 3,600; output 144,000.
    const long = chatCost(usage('priority', 300_000), PRICES);
    expect(long.amount).toBe(10_875_600);
    expect(long.rule).toMatch(/^chat \(service tier priority, tier above 272000 input tokens\): /);
  });

  it('flex has no length tier of its own: a long flex request stays at the flex prices', () => {
    // input 298,000 x 4.5 = 1,341,000; cache read 1,800; output 36,000.
    expect(chatCost(usage('flex', 300_000), PRICES).amount).toBe(1_378_800);
  });

  it('a served tier without prices of its own: the base prices, and the rule says so', () => {
    const bill = chatCost(usage('default'), PRICES);
    expect(bill.amount).toBe(145_800);
    expect(bill.rule).toContain('service tier default (no prices of its own: the base prices)');
  });

  it('the hold covers the dearest table, whatever tier was asked', () => {
    const config = parseConfig(
      testConfig({
        models: [
          {
            id: 'gpt',
            upstream: 'simulator',
            families: ['chat'],
            prices: PRICES,
            max_output_tokens: 1_000,
          },
        ],
      }),
      'test',
    );
    const model = config.models[0];
    if (model === undefined) throw new Error('no model');
    const request = validateChat(
      { model: 'gpt', messages: [{ role: 'user', content: 'hello' }], service_tier: 'flex' },
      model,
    );
    // Priority's input (18) and output (144) are the dearest reachable: worst-case input is
    // small, so no length tier is.
    const hold = chatReserve(request, model, PRICES);
    expect(hold).toBe(Math.ceil((request.textBytes + 8) * 18) + 144_000 + 4);
    for (const tier of [undefined, 'flex', 'priority', 'default'])
      expect(
        chatCost({ ...usage(tier, request.textBytes + 8), cachedTokens: 0 }, PRICES).amount,
      ).toBeLessThanOrEqual(hold);
  });
});
