import type { BillLineItem, TokenLineItemName } from '@tollgate/protocol';
import type { ModelConfig, TokenPrices } from '../config/schema.js';
import { costPerMillion } from '../billing/money.js';
import { chatPricesFor, reachableChatPrices, type ChatTokenPrices } from './chat-prices.js';
import type { ChatRequest, ChatUsage } from './chat-types.js';

const TOKENS_PER_MESSAGE = 8;
/**
 * What the hold adds for rounding. Each line item rounds up once, and k items rounded apart are
 * at most k − 1 micro-yuan above their total rounded once: the capture's four input items
 * (uncached, cache read, 5-minute and 1-hour cache writes) against the hold's one input item,
 * and its two output items (visible, reasoning) against the hold's one output item: 3 + 1; and
 * one more for each audio or image item a reachable price table bills apart.
 */
function roundingMargin(reachable: readonly ChatTokenPrices[]): number {
  const apart = (price: (prices: ChatTokenPrices) => number | undefined) =>
    reachable.some((prices) => price(prices) !== undefined) ? 1 : 0;
  return (
    3 +
    1 +
    apart((prices) => prices.audioInput) +
    apart((prices) => prices.imageInput) +
    apart((prices) => prices.audioOutput) +
    apart((prices) => prices.imageOutput)
  );
}

/** The worst-case input tokens: text bytes, per-message overhead, configured image/video tokens. */
export function worstCaseInputTokens(request: ChatRequest, model: ModelConfig): number {
  return (
    request.textBytes +
    TOKENS_PER_MESSAGE * request.messages.length +
    request.images.length * model.image_input_tokens +
    request.videoCount * model.video_input_tokens
  );
}

/**
 * Hold: every worst-case input token at the dearest input-side price (input, cache read, either
 * cache write, audio and image input) and the whole output cap at the dearest output-side price
 * (output, reasoning, audio and image output),
 * each the dearest over every price set the request could be billed at — the base prices, each
 * length tier its worst-case input could be above, each service tier — plus the per-request
 * fee, the fee per tool call for the most tool calls the answer may make, and the rounding margin. So no usage within the request's caps captures more.
 */
export function chatReserve(request: ChatRequest, model: ModelConfig, prices: TokenPrices): number {
  const inputTokens = worstCaseInputTokens(request, model);
  const reachable = reachableChatPrices(prices, inputTokens);
  const inputPrice = Math.max(
    ...reachable.map((price) =>
      Math.max(
        price.input,
        price.cacheRead,
        price.cacheWrite,
        price.cacheWrite1h,
        price.audioInput ?? 0,
        price.imageInput ?? 0,
      ),
    ),
  );
  const outputPrice = Math.max(
    ...reachable.map((price) =>
      Math.max(price.output, price.reasoning, price.audioOutput ?? 0, price.imageOutput ?? 0),
    ),
  );
  return (
    costPerMillion(inputTokens, inputPrice) +
    costPerMillion(request.maxOutputTokens, outputPrice) +
    (prices.per_request ?? 0) +
    (prices.per_tool_call ?? 0) * heldToolCalls(request, model) +
    roundingMargin(reachable)
  );
}

/**
 * The most tool calls of one answer the `per_tool_call` fee is held and billed for: none without
 * tools or with `tool_choice: "none"`, one with `parallel_tool_calls: false` (as sent upstream),
 * else the model's `max_tool_calls`.
 */
export function heldToolCalls(request: ChatRequest, model: ModelConfig): number {
  if (!request.features.has('tools') || request.passthrough['tool_choice'] === 'none') return 0;
  return request.passthrough['parallel_tool_calls'] === false ? 1 : model.max_tool_calls;
}

/** `usage` with the answer's tool calls counted (`toolCalls`, left out when there are none). */
export function withToolCalls(usage: ChatUsage, toolCalls: number): ChatUsage {
  return toolCalls === 0 ? usage : { ...usage, toolCalls };
}

/** A chat request's bill: its line items, their sum, and the computation for people. */
export interface ChatBill {
  readonly amount: number;
  readonly rule: string;
  /** Every item with units (an item of 0 units is left out); their amounts sum to `amount`. */
  readonly lineItems: BillLineItem[];
}

/**
 * Actual cost: one line item per usage field — uncached input, cache reads, 5-minute and 1-hour
 * cache writes, audio and image input (where priced apart), visible output, reasoning, audio and
 * image output (likewise) — each `ceil(units × price / 1e6)`, rounded once for
 * the whole request, at the prices of the request's service tier and length tier
 * (chat-prices.ts); then the per-request fee and the fee per tool call.
 */
export function chatCost(usage: ChatUsage, prices: TokenPrices): ChatBill {
  const { prices: price, basis } = chatPricesFor(prices, usage.promptTokens, usage.serviceTier);
  const counts = uncachedAndVisible(usage);
  const input = pricedApart(counts.input, [
    [usage.audioInputTokens, price.audioInput],
    [usage.imageInputTokens, price.imageInput],
  ]);
  const output = pricedApart(counts.output, [
    [usage.audioOutputTokens, price.audioOutput],
    [usage.imageOutputTokens, price.imageOutput],
  ]);
  const tokens: readonly (readonly [TokenLineItemName, number, number])[] = [
    ['input', input.rest, price.input],
    ['cache_read', usage.cachedTokens, price.cacheRead],
    ['cache_write', usage.cacheWriteTokens ?? 0, price.cacheWrite],
    ['cache_write_1h', usage.cacheWrite1hTokens ?? 0, price.cacheWrite1h],
    ['audio_input', input.apart[0] ?? 0, price.audioInput ?? 0],
    ['image_input', input.apart[1] ?? 0, price.imageInput ?? 0],
    ['output', output.rest, price.output],
    ['reasoning', usage.reasoningTokens, price.reasoning],
    ['audio_output', output.apart[0] ?? 0, price.audioOutput ?? 0],
    ['image_output', output.apart[1] ?? 0, price.imageOutput ?? 0],
  ];
  const lineItems: BillLineItem[] = tokens
    .filter(([, units]) => units > 0)
    .map(([item, units, perMillion]) => ({
      item,
      units,
      price_per_million: perMillion,
      amount: costPerMillion(units, perMillion),
    }));
  const fee = prices.per_request;
  if (fee !== undefined)
    lineItems.push({ item: 'request', units: 1, unit_price: fee, amount: fee });
  const toolCallFee = prices.per_tool_call;
  const toolCalls = usage.toolCalls ?? 0;
  if (toolCallFee !== undefined && toolCalls > 0)
    lineItems.push({
      item: 'tool_call',
      units: toolCalls,
      unit_price: toolCallFee,
      amount: toolCalls * toolCallFee,
    });
  const amount = lineItems.reduce((sum, item) => sum + item.amount, 0);
  const parts = lineItems.map((item) =>
    'price_per_million' in item
      ? `${item.item} ceil(${item.units} x ${item.price_per_million} / 1e6) = ${item.amount}`
      : `${item.item} ${item.units} x ${item.unit_price} = ${item.amount}`,
  );
  const head = basis.length === 0 ? 'chat' : `chat (${basis.join(', ')})`;
  const notes = counts.notes.length === 0 ? '' : ` (${counts.notes.join('; ')})`;
  return {
    amount,
    rule: `${head}: ${parts.join(' + ') || 'no tokens'} = ${amount} micro-yuan${notes}`,
    lineItems,
  };
}

/**
 * The parts of `total` (uncached input, or visible output) billed at their own price: each
 * reported count whose price is configured, in order, within what the earlier ones left of the
 * total; a count without its own price stays in `rest`, billed as input or output. Audio and
 * image input may overlap the cache reads (a cache holds tokens of every kind): what does not fit
 * in the uncached input was read from the cache, and is billed at the cache price.
 */
function pricedApart(
  total: number,
  parts: readonly (readonly [number | undefined, number | undefined])[],
): { rest: number; apart: number[] } {
  let rest = total;
  const apart = parts.map(([count, price]) => {
    if (count === undefined || price === undefined) return 0;
    const billed = Math.min(count, rest);
    rest -= billed;
    return billed;
  });
  return { rest, apart };
}

/**
 * Uncached input (`promptTokens` less cache reads and writes) and visible output
 * (`completionTokens` less reasoning), never negative. Parts above their total are an
 * inconsistency of the upstream's report, named in the rule: the rest is billed as 0 and the
 * parts as reported. (The caller's bill never gets here with one: credible-usage.ts cuts the
 * parts to their total first and flags the record.)
 */
function uncachedAndVisible(usage: ChatUsage): {
  input: number;
  output: number;
  notes: string[];
} {
  const cacheParts =
    usage.cachedTokens + (usage.cacheWriteTokens ?? 0) + (usage.cacheWrite1hTokens ?? 0);
  const notes: string[] = [];
  if (cacheParts > usage.promptTokens)
    notes.push(
      `input-side inconsistency: cache reads and writes ${cacheParts} above prompt_tokens ${usage.promptTokens}, uncached input billed as 0`,
    );
  if (usage.reasoningTokens > usage.completionTokens)
    notes.push(
      `output-side inconsistency: reasoning_tokens ${usage.reasoningTokens} above completion_tokens ${usage.completionTokens}, visible output billed as 0`,
    );
  return {
    input: Math.max(0, usage.promptTokens - cacheParts),
    output: Math.max(0, usage.completionTokens - usage.reasoningTokens),
    notes,
  };
}
