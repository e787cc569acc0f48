import type { ChatRequest } from '../../../chat/chat-types.js';
import type { ModelConfig } from '../../../config/schema.js';

/**
 * `POST /v1/messages/count_tokens`'s estimate (docs/anthropic-messages.md, "count_tokens"). The
 * gateway has no tokenizer of every upstream, and its hold counts a byte as a token (the worst
 * case, chat/chat-pricing.ts `worstCaseInputTokens`), four times what English text costs: a
 * caller managing its context by that figure would compact far too early. The estimate counts
 * the same text bytes (the chat validator's `textBytes`: messages, tool calls, tool
 * definitions) at 3 bytes a token, above what English (about 4) and CJK text (3 bytes a
 * character, about a token each) cost, plus 8 tokens a message and each image or video at the
 * model's configured `image_input_tokens` / `video_input_tokens` (the hold's own figures).
 */
export const BYTES_PER_TOKEN = 3;
const TOKENS_PER_MESSAGE = 8;

/** Text bytes as estimated tokens, rounded up. */
export function estimatedTokens(textBytes: number): number {
  return Math.ceil(textBytes / BYTES_PER_TOKEN);
}

export function countInputTokens(chat: ChatRequest, model: ModelConfig): number {
  return (
    estimatedTokens(chat.textBytes) +
    TOKENS_PER_MESSAGE * chat.messages.length +
    chat.images.length * model.image_input_tokens +
    chat.videoCount * model.video_input_tokens
  );
}
