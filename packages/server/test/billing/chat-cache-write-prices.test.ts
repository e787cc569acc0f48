import { describe, expect, it } from 'vitest';
import { credibleChatUsage } from '../../src/chat/credible-usage.js';
import { chatCost } from '../../src/chat/chat-pricing.js';
import type { ChatUsage } from '../../src/chat/chat-types.js';
import { usageFields } from '../../src/chat/usage-fields.js';
import { defaultConfig } from '../../src/config/default-config.js';
import type { TokenPrices } from '../../src/config/schema.js';
import { readMessagesAnswer } from '../../src/providers/anthropic/messages-answer.js';
import { MessagesStreamReader } from '../../src/providers/anthropic/messages-stream.js';

/**
 * Risk: a prompt-cache write is billed at the wrong price — at the input price when the provider
 * charges 1.25x (5 minutes) or 2x (1 hour), 1-hour writes billed as 5-minute ones, Anthropic's
 * split by TTL lost between `message_start` and `message_delta` — or a bill that cannot be
 * reconciled with the provider's invoice by hand. Every figure below is computed by hand in the
 * comments, in micro-yuan (1 000 000 = 1 yuan), each line item `ceil(units x price / 1e6)`.
 */

/** Claude Sonnet 4.5 at 7.2 yuan per dollar, as examples/config/anthropic.json prices it. */
const SONNET: TokenPrices = {
  input_per_million_tokens: 21_600_000, // $3
  cached_input_per_million_tokens: 2_160_000, // $0.30: cache reads
  cache_write_per_million_tokens: 27_000_000, // $3.75: 5-minute writes, 1.25x input
  cache_write_1h_per_million_tokens: 43_200_000, // $6: 1-hour writes, 2x input
  output_per_million_tokens: 108_000_000, // $15
};

/** Anthropic's usage as a ChatUsage: its `input_tokens` exclude cache reads and writes. */
function anthropicUsage(counts: {
  input: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h?: number;
  output: number;
}): ChatUsage {
  const oneHour = counts.cacheWrite1h ?? 0;
  return {
    promptTokens: counts.input + counts.cacheRead + counts.cacheWrite5m + oneHour,
    completionTokens: counts.output,
    cachedTokens: counts.cacheRead,
    reasoningTokens: 0,
    cacheWriteTokens: counts.cacheWrite5m,
    ...(counts.cacheWrite1h === undefined ? {} : { cacheWrite1hTokens: oneHour }),
  };
}

describe('chat line items at cache-write prices (worked examples)', () => {
  it('reconciles 24,951 input, 854 output, 64,126 cache read and 2,805 cache write tokens', () => {
    // At SONNET's prices:
    //   input       24,951 x 21,600,000 / 1e6 = 538,941.6   -> 538,942
    //   cache read  64,126 x  2,160,000 / 1e6 = 138,512.16  -> 138,513
    //   cache write  2,805 x 27,000,000 / 1e6 =  75,735     ->  75,735
    //   output         854 x 108,000,000 / 1e6 =  92,232    ->  92,232
    //   total 538,942 + 138,513 + 75,735 + 92,232 = 845,422 micro-yuan (0.845422 yuan).
    // The provider's invoice: $0.074853 + $0.0192378 + $0.01051875 + $0.01281 = $0.11741955,
    // x 7.2 = 845,420.76 micro-yuan; the bill is 1.24 above it, the two fractions rounded up.
    const usage = anthropicUsage({
      input: 24_951,
      cacheRead: 64_126,
      cacheWrite5m: 2_805,
      output: 854,
    });
    expect(usage.promptTokens).toBe(91_882);
    const bill = chatCost(usage, SONNET);
    expect(bill.lineItems).toEqual([
      { item: 'input', units: 24_951, price_per_million: 21_600_000, amount: 538_942 },
      { item: 'cache_read', units: 64_126, price_per_million: 2_160_000, amount: 138_513 },
      { item: 'cache_write', units: 2_805, price_per_million: 27_000_000, amount: 75_735 },
      { item: 'output', units: 854, price_per_million: 108_000_000, amount: 92_232 },
    ]);
    expect(bill.amount).toBe(845_422);
    expect(bill.rule).toBe(
      'chat: input ceil(24951 x 21600000 / 1e6) = 538942 + cache_read ceil(64126 x 2160000 / 1e6) = 138513 + cache_write ceil(2805 x 27000000 / 1e6) = 75735 + output ceil(854 x 108000000 / 1e6) = 92232 = 845422 micro-yuan',
    );
  });

  it('bills 1-hour writes at their own price, apart from 5-minute ones', () => {
    //   input           1,000 x  21,600,000 / 1e6 = 21,600
    //   cache read     10,000 x   2,160,000 / 1e6 = 21,600
    //   cache write     3,000 x  27,000,000 / 1e6 = 81,000
    //   cache write 1h  2,000 x  43,200,000 / 1e6 = 86,400
    //   output            500 x 108,000,000 / 1e6 = 54,000
    //   total 264,600
    const bill = chatCost(
      anthropicUsage({
        input: 1_000,
        cacheRead: 10_000,
        cacheWrite5m: 3_000,
        cacheWrite1h: 2_000,
        output: 500,
      }),
      SONNET,
    );
    expect(bill.lineItems.map((item) => [item.item, item.units, item.amount])).toEqual([
      ['input', 1_000, 21_600],
      ['cache_read', 10_000, 21_600],
      ['cache_write', 3_000, 81_000],
      ['cache_write_1h', 2_000, 86_400],
      ['output', 500, 54_000],
    ]);
    expect(bill.amount).toBe(264_600);
  });

  it('without cache-write prices, writes cost the input price: an existing configuration bills as before', () => {
    // sim-chat: input 2,000,000, cached 500,000, output and reasoning 8,000,000, no write prices.
    // Before cache-write prices a write was part of the uncached input; it still costs the same:
    //   input 100 x 2 = 200, cache read 300 x 0.5 = 150, cache write 50 x 2 = 100 (the input
    //   price), cache write 1h 20 x 2 = 40, output 10 x 8 = 80: 570 = (100 + 50 + 20) x 2 + 150 + 80.
    const simChat = defaultConfig.models.find((model) => model.id === 'sim-chat');
    if (simChat === undefined) throw new Error('no sim-chat');
    const bill = chatCost(
      anthropicUsage({
        input: 100,
        cacheRead: 300,
        cacheWrite5m: 50,
        cacheWrite1h: 20,
        output: 10,
      }),
      simChat.prices,
    );
    expect(bill.lineItems.map((item) => [item.item, item.amount])).toEqual([
      ['input', 200],
      ['cache_read', 150],
      ['cache_write', 100],
      ['cache_write_1h', 40],
      ['output', 80],
    ]);
    expect(bill.amount).toBe(570);
  });

  it('reasoning at its own price where the model has one, else at the output price', () => {
    // OpenAI-style usage: prompt 1,234 of which 1,000 cached; completion 777 of which 500 reasoning.
    //   input 234 x 9 = 2,106; cache read 1,000 x 0.9 = 900; output 277 x 72 = 19,944;
    //   reasoning 500 x 72 = 36,000 (the output price): 58,950. At 80 per token: 40,000, 62,950.
    const prices: TokenPrices = {
      input_per_million_tokens: 9_000_000,
      cached_input_per_million_tokens: 900_000,
      output_per_million_tokens: 72_000_000,
    };
    const usage: ChatUsage = {
      promptTokens: 1_234,
      cachedTokens: 1_000,
      completionTokens: 777,
      reasoningTokens: 500,
    };
    expect(chatCost(usage, prices).amount).toBe(58_950);
    const dearer = chatCost(usage, { ...prices, reasoning_per_million_tokens: 80_000_000 });
    expect(dearer.lineItems.at(-1)).toEqual({
      item: 'reasoning',
      units: 500,
      price_per_million: 80_000_000,
      amount: 40_000,
    });
    expect(dearer.amount).toBe(62_950);
  });

  it('adds the per-request fee as its own line item', () => {
    // 1,000 input x 21.6 = 21,600; 100 output x 108 = 10,800; the fee 5,000: 37,400.
    const bill = chatCost(
      { promptTokens: 1_000, cachedTokens: 0, completionTokens: 100, reasoningTokens: 0 },
      { ...SONNET, per_request: 5_000 },
    );
    expect(bill.lineItems.at(-1)).toEqual({
      item: 'request',
      units: 1,
      unit_price: 5_000,
      amount: 5_000,
    });
    expect(bill.amount).toBe(37_400);
    expect(bill.rule).toContain('+ request 1 x 5000 = 5000 = 37400 micro-yuan');
  });

  it('rounds each line item up once per request: one token of each kind at 1 micro-yuan per million', () => {
    // Six items of one token each, exact value 6 x 0.000001: each rounds up to 1, total 6. Never
    // rounded per chunk or per tier: the items are counted over the whole request first.
    const ones: TokenPrices = {
      input_per_million_tokens: 1,
      output_per_million_tokens: 1,
    };
    const bill = chatCost(
      {
        promptTokens: 4,
        cachedTokens: 1,
        cacheWriteTokens: 1,
        cacheWrite1hTokens: 1,
        completionTokens: 2,
        reasoningTokens: 1,
      },
      ones,
    );
    expect(bill.lineItems.map((item) => item.amount)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(bill.amount).toBe(6);
  });
});

describe('an input-side inconsistency (cache reads and writes above prompt_tokens)', () => {
  const inconsistent: ChatUsage = {
    promptTokens: 100,
    cachedTokens: 80,
    cacheWriteTokens: 30,
    cacheWrite1hTokens: 10,
    completionTokens: 5,
    reasoningTokens: 0,
  };

  it('prices uncached input as 0, never negative, and names the inconsistency', () => {
    // The parts (120) exceed the prompt (100): uncached input would be -20.
    const bill = chatCost(inconsistent, SONNET);
    expect(bill.lineItems.map((item) => item.item)).toEqual([
      'cache_read',
      'cache_write',
      'cache_write_1h',
      'output',
    ]);
    for (const item of bill.lineItems) expect(item.amount).toBeGreaterThanOrEqual(0);
    expect(bill.rule).toContain(
      'input-side inconsistency: cache reads and writes 120 above prompt_tokens 100, uncached input billed as 0',
    );
  });

  it("the caller's bill counts the parts only within prompt_tokens (reads first) and flags the record", () => {
    const credible = credibleChatUsage(inconsistent, { inputUpperEstimate: 1_000, outputCap: 50 });
    // Reads 80 kept, then 20 of the 30 five-minute writes, no one-hour writes: 100 in all.
    expect(credible.billed).toEqual({
      promptTokens: 100,
      cachedTokens: 80,
      cacheWriteTokens: 20,
      cacheWrite1hTokens: 0,
      completionTokens: 5,
      reasoningTokens: 0,
    });
    expect(credible.flag).toContain('input-side inconsistency');
    expect(chatCost(credible.billed, SONNET).rule).not.toContain('inconsistency');
  });

  it('a consistent report is not flagged, and keeps its service tier and cache writes', () => {
    const usage: ChatUsage = {
      promptTokens: 100,
      cachedTokens: 50,
      cacheWriteTokens: 30,
      cacheWrite1hTokens: 20,
      completionTokens: 5,
      reasoningTokens: 0,
      serviceTier: 'priority',
    };
    const credible = credibleChatUsage(usage, { inputUpperEstimate: 1_000, outputCap: 50 });
    expect(credible).toEqual({ billed: usage, flag: undefined });
  });
});

describe("Anthropic's cache writes, split by TTL", () => {
  const message = (usage: Record<string, unknown>) =>
    readMessagesAnswer(
      {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'hi' }],
        stop_reason: 'end_turn',
        usage,
      },
      'claude',
      null,
    ).usage;

  it('reads ephemeral_5m and ephemeral_1h from cache_creation, as the simulator sends them', () => {
    const usage = message({
      input_tokens: 24_951,
      cache_read_input_tokens: 64_126,
      cache_creation_input_tokens: 2_805,
      cache_creation: { ephemeral_5m_input_tokens: 805, ephemeral_1h_input_tokens: 2_000 },
      output_tokens: 854,
      service_tier: 'standard',
    });
    expect(usage).toEqual({
      promptTokens: 91_882,
      cachedTokens: 64_126,
      cacheWriteTokens: 805,
      cacheWrite1hTokens: 2_000,
      completionTokens: 854,
      reasoningTokens: 0,
    });
    expect(usageFields(usage)).toMatchObject({
      cache_write_tokens: 805,
      cache_write_1h_tokens: 2_000,
    });
  });

  it('without a split, every write is a 5-minute write and the record has no 1-hour count', () => {
    const usage = message({
      input_tokens: 10,
      cache_creation_input_tokens: 50,
      output_tokens: 7,
    });
    expect(usage).toEqual({
      promptTokens: 60,
      cachedTokens: 0,
      cacheWriteTokens: 50,
      completionTokens: 7,
      reasoningTokens: 0,
    });
    expect(usageFields(usage)).not.toHaveProperty('cache_write_1h_tokens');
  });

  it('a 1-hour count above the total of writes is cut to it (the total is what Anthropic bills)', () => {
    const usage = message({
      input_tokens: 10,
      cache_creation_input_tokens: 50,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 70 },
      output_tokens: 7,
    });
    expect(usage).toMatchObject({ promptTokens: 60, cacheWriteTokens: 0, cacheWrite1hTokens: 50 });
  });

  it("a stream keeps message_start's split when message_delta repeats only the total", () => {
    const reader = new MessagesStreamReader('claude');
    const events = [
      reader.read({
        type: 'message_start',
        message: {
          type: 'message',
          role: 'assistant',
          usage: {
            input_tokens: 5,
            output_tokens: 1,
            cache_read_input_tokens: 100,
            cache_creation_input_tokens: 30,
            cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 20 },
          },
        },
      }),
      reader.read({
        type: 'message_delta',
        delta: { stop_reason: 'end_turn' },
        usage: { output_tokens: 9, cache_creation_input_tokens: 30 },
      }),
      reader.read({ type: 'message_stop' }),
    ].flat();
    const usage = events.find((event) => event.kind === 'chunk' && event.usage !== undefined);
    expect(usage?.kind === 'chunk' ? usage.usage : undefined).toEqual({
      promptTokens: 135,
      cachedTokens: 100,
      cacheWriteTokens: 10,
      cacheWrite1hTokens: 20,
      completionTokens: 9,
      reasoningTokens: 0,
    });
  });
});
