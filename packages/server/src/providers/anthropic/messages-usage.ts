import type { ChatUsage } from '../../chat/chat-types.js';
import type { StopReason } from './messages-schemas.js';

/** Anthropic's token counts of one message, as read from its answer or its stream. */
export interface MessagesTokens {
  readonly input: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly output: number;
}

/**
 * The internal usage of an Anthropic message. Anthropic's `input_tokens` exclude what the prompt
 * cache read and wrote, so the prompt is their sum; cache reads are the cached input (billed at the
 * cached price), cache writes are kept apart (billed at the input price). Thinking is part of
 * `output_tokens` and Anthropic does not say how much of it was thinking, so `reasoningTokens`
 * is 0: the whole output is billed at the output price. `undefined`: a sum beyond safe integers.
 */
export function chatUsageOf(tokens: MessagesTokens): ChatUsage | undefined {
  const promptTokens = tokens.input + tokens.cacheRead + tokens.cacheWrite;
  if (!Number.isSafeInteger(promptTokens)) return undefined;
  return {
    promptTokens,
    completionTokens: tokens.output,
    cachedTokens: tokens.cacheRead,
    reasoningTokens: 0,
    cacheWriteTokens: tokens.cacheWrite,
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
