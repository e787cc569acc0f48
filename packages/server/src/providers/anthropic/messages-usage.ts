import { servedServiceTier } from '../../chat/chat-prices.js';
import type { ChatUsage } from '../../chat/chat-types.js';
import type { MessageUsage, StopReason } from './messages-schemas.js';

/** Anthropic's token counts of one message, as read from its answer or its stream. */
export interface MessagesTokens {
  readonly input: number;
  readonly cacheRead: number;
  /** Every cache write, both TTLs (`cache_creation_input_tokens`). */
  readonly cacheWrite: number;
  /**
   * Of `cacheWrite`, those to the 1-hour cache (`cache_creation.ephemeral_1h_input_tokens`);
   * `undefined` when Anthropic did not split its writes by TTL.
   */
  readonly cacheWrite1h?: number | undefined;
  readonly output: number;
  /** The tier Anthropic reports it served the message on (`usage.service_tier`). */
  readonly serviceTier?: string | null | undefined;
}

/**
 * Anthropic's cache writes of a usage object: the total (`cache_creation_input_tokens`, else the
 * sum of its split) and, when `cache_creation` splits them by TTL, the 1-hour part.
 */
export function cacheWritesOf(
  usage: Pick<MessageUsage, 'cache_creation_input_tokens' | 'cache_creation'>,
): Pick<MessagesTokens, 'cacheWrite' | 'cacheWrite1h'> {
  const split = usage.cache_creation ?? undefined;
  const cacheWrite =
    usage.cache_creation_input_tokens ??
    (split === undefined
      ? 0
      : (split.ephemeral_5m_input_tokens ?? 0) + (split.ephemeral_1h_input_tokens ?? 0));
  return { cacheWrite, cacheWrite1h: split?.ephemeral_1h_input_tokens ?? undefined };
}

/**
 * The internal usage of an Anthropic message. Anthropic's `input_tokens` exclude what the prompt
 * cache read and wrote, so the prompt is their sum; cache reads are the cached input (billed at the
 * cached price), cache writes are kept apart by TTL (billed at the cache-write prices): the 1-hour
 * writes Anthropic names, at most the total, and the rest of the total as 5-minute writes — all of
 * it when Anthropic does not split them. Thinking is part of `output_tokens` and Anthropic does not
 * say how much of it was thinking, so `reasoningTokens` is 0: the whole output is billed at the
 * output price. `undefined`: a sum beyond safe integers.
 */
export function chatUsageOf(tokens: MessagesTokens): ChatUsage | undefined {
  const promptTokens = tokens.input + tokens.cacheRead + tokens.cacheWrite;
  if (!Number.isSafeInteger(promptTokens)) return undefined;
  const oneHour =
    tokens.cacheWrite1h === undefined
      ? undefined
      : Math.min(tokens.cacheWrite1h, tokens.cacheWrite);
  const serviceTier = servedServiceTier(tokens.serviceTier);
  return {
    ...(serviceTier === undefined ? {} : { serviceTier }),
    promptTokens,
    completionTokens: tokens.output,
    cachedTokens: tokens.cacheRead,
    reasoningTokens: 0,
    cacheWriteTokens: tokens.cacheWrite - (oneHour ?? 0),
    ...(oneHour === undefined ? {} : { cacheWrite1hTokens: oneHour }),
  };
}

/** Chat's `finish_reason` for Anthropic's `stop_reason` (messages-schemas.ts says why `length`). */
export const FINISH_REASONS: Readonly<Record<StopReason, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
  pause_turn: 'length',
  model_context_window_exceeded: 'length',
};
