import type { ModelConfig, TokenPrices } from '../config/schema.js';
import { costPerMillion } from '../billing/money.js';
import type { ChatRequest, ChatUsage } from './chat-types.js';

const TOKENS_PER_MESSAGE = 8;
/** One micro-yuan per extra line item: actual usage splits into up to four rounded items. */
const ROUNDING_MARGIN = 2;

/** The worst-case input tokens: text bytes, per-message overhead, configured image/video tokens. */
export function worstCaseInputTokens(request: ChatRequest, model: ModelConfig): number {
  return (
    request.textBytes +
    TOKENS_PER_MESSAGE * request.messages.length +
    request.images.length * model.image_input_tokens +
    request.videoCount * model.video_input_tokens
  );
}

/** Hold: every input token at the dearest input price, the whole output cap at the dearest output price. */
export function chatReserve(request: ChatRequest, model: ModelConfig, prices: TokenPrices): number {
  const input = prices.input_per_million_tokens ?? 0;
  const output = prices.output_per_million_tokens ?? 0;
  const inputPrice = Math.max(input, prices.cached_input_per_million_tokens ?? input);
  const outputPrice = Math.max(output, prices.reasoning_per_million_tokens ?? output);
  return (
    costPerMillion(worstCaseInputTokens(request, model), inputPrice) +
    costPerMillion(request.maxOutputTokens, outputPrice) +
    ROUNDING_MARGIN
  );
}

/**
 * Actual cost: uncached input, cached input, visible output and reasoning output, each a line
 * item rounded up. Cached input defaults to the input price, reasoning to the output price.
 */
export function chatCost(usage: ChatUsage, prices: TokenPrices): { amount: number; rule: string } {
  const input = prices.input_per_million_tokens ?? 0;
  const output = prices.output_per_million_tokens ?? 0;
  const cachedPrice = prices.cached_input_per_million_tokens ?? input;
  const reasoningPrice = prices.reasoning_per_million_tokens ?? output;
  const items = [
    ['input', usage.promptTokens - usage.cachedTokens, input],
    ['cached_input', usage.cachedTokens, cachedPrice],
    ['output', usage.completionTokens - usage.reasoningTokens, output],
    ['reasoning', usage.reasoningTokens, reasoningPrice],
  ] as const;
  let amount = 0;
  const parts: string[] = [];
  for (const [name, tokens, price] of items) {
    if (tokens === 0) continue;
    const cost = costPerMillion(tokens, price);
    amount += cost;
    parts.push(`${name} ceil(${tokens} x ${price} / 1e6) = ${cost}`);
  }
  return { amount, rule: `chat: ${parts.join(' + ') || 'no tokens'} = ${amount} micro-yuan` };
}
