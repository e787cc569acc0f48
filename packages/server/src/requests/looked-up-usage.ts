import type { BillLineItem } from '@tollgate/protocol';
import { z } from 'zod';
import { inputLineItems } from './input-token-outcome.js';
import { costPerMillion } from '../billing/money.js';
import { chatCost } from '../chat/chat-pricing.js';
import type { TokenPrices } from '../config/schema.js';
import { usageSchema as chatUsageSchema } from '../providers/openai-compatible/chat-schemas.js';
import { toChatUsage } from '../providers/openai-compatible/chat.js';
import { usageFields } from '../chat/usage-fields.js';

/** The price of a looked-up usage, before the hold's cap; `undefined` when it cannot be read. */
export interface UsagePrice {
  readonly amount: number;
  readonly rule: string;
  /** The usage as the record keeps it (the caller-facing shape of its family). */
  readonly usage: Record<string, number>;
  /** What `amount` is made of (`bill.line_items`). */
  readonly lineItems: readonly BillLineItem[];
}

const tokens = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const embeddingsUsage = z.object({ prompt_tokens: tokens });
const rerankUsage = z.object({ total_tokens: tokens });

/**
 * Prices the usage an upstream's request look-up reported for a text call, by the record's path
 * (its family) and its price version's prices, with the formulas the live calls use
 * (`chatCost`, `costPerMillion` over the counted tokens). `undefined`: the path is not a text
 * call, or the usage is missing or not of its family's shape (an operator decides then).
 */
export function priceLookedUpUsage(
  path: string,
  usage: unknown,
  prices: TokenPrices,
): UsagePrice | undefined {
  const perMillion = prices.input_per_million_tokens ?? 0;
  if (path === '/v1/embeddings') {
    const parsed = embeddingsUsage.safeParse(usage);
    if (!parsed.success) return undefined;
    const counted = parsed.data.prompt_tokens;
    const amount = costPerMillion(counted, perMillion);
    return {
      amount,
      rule: `embeddings: ceil(prompt_tokens ${counted} x ${perMillion} / 1e6) = ${amount} micro-yuan`,
      usage: { prompt_tokens: counted, total_tokens: counted },
      lineItems: inputLineItems(counted, perMillion),
    };
  }
  if (path === '/v1/rerank') {
    const parsed = rerankUsage.safeParse(usage);
    if (!parsed.success) return undefined;
    const counted = parsed.data.total_tokens;
    const amount = costPerMillion(counted, perMillion);
    return {
      amount,
      rule: `rerank: ceil(total_tokens ${counted} x ${perMillion} / 1e6) = ${amount} micro-yuan`,
      usage: { total_tokens: counted },
      lineItems: inputLineItems(counted, perMillion),
    };
  }
  if (path === '/v1/chat/completions') {
    const parsed = chatUsageSchema.safeParse(usage);
    if (!parsed.success) return undefined;
    const chat = toChatUsage(parsed.data);
    if (chat === undefined) return undefined;
    const cost = chatCost(chat, prices);
    return {
      amount: cost.amount,
      rule: cost.rule,
      usage: usageFields(chat),
      lineItems: cost.lineItems,
    };
  }
  return undefined;
}

/** The paths whose records the reconciler looks up: the text calls (OCR is a chat call). */
export const LOOKED_UP_PATHS = ['/v1/chat/completions', '/v1/embeddings', '/v1/rerank'] as const;
