import type { Feature } from '../config/schema.js';

/**
 * A validated chat request. The upstream gets the caller's messages as sent, less the fields
 * only a client library puts on them (client-only-fields.ts).
 */
export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly Record<string, unknown>[];
  readonly stream: boolean;
  /** The caller asked for the usage chunk (`stream_options.include_usage`). */
  readonly includeUsage: boolean;
  /** The output cap held and billed against (the caller's, or the model's). */
  readonly maxOutputTokens: number;
  /**
   * The token limit put into the upstream body: `{}` when the caller gave none and the upstream
   * needs none, else one field, named as the model's upstream accepts it (validate-chat.ts).
   */
  readonly upstreamTokenLimit: Readonly<Record<string, number>>;
  readonly conversationId: string | undefined;
  /** The other fields forwarded upstream as the caller sent them (already validated). */
  readonly passthrough: Readonly<Record<string, unknown>>;
  /**
   * Request fields not sent upstream (docs/chat.md, "Request fields"): named to the caller in
   * `X-Tollgate-Dropped-Fields` (`store`, `messages[].parsed`, …).
   */
  readonly dropped: readonly string[];
  readonly features: ReadonlySet<Feature>;
  /** Images given as data URIs: media type and decoded bytes (the OCR rules read them). */
  readonly images: readonly ImagePart[];
  readonly videoCount: number;
  /** UTF-8 bytes of every text the model reads: the basis of the worst-case input estimate. */
  readonly textBytes: number;
}

export interface ImagePart {
  /** Where it was in the request, for error messages: `messages.1.content.0`. */
  readonly path: string;
  readonly kind: 'data_uri' | 'url';
  readonly mediaType: string | undefined;
  readonly bytes: Buffer | undefined;
}

export interface ChatUsage {
  /** Every input token, cache reads and cache writes included. */
  promptTokens: number;
  completionTokens: number;
  /** Input tokens read from the upstream's prompt cache (billed at the cached-input price). */
  cachedTokens: number;
  reasoningTokens: number;
  /**
   * Input tokens written to the upstream's 5-minute prompt cache, when it says so (Anthropic's
   * `cache_creation_input_tokens` less its 1-hour writes): part of `promptTokens`, billed at
   * `cache_write_per_million_tokens`.
   */
  cacheWriteTokens?: number;
  /**
   * Input tokens written to the upstream's 1-hour prompt cache (Anthropic's
   * `cache_creation.ephemeral_1h_input_tokens`): part of `promptTokens`, billed at
   * `cache_write_1h_per_million_tokens`. Absent when the upstream did not split its writes.
   */
  cacheWrite1hTokens?: number;
  /**
   * Audio and image tokens, where the upstream reports them apart (OpenAI's and Qwen's
   * `prompt_tokens_details.audio_tokens` / `image_tokens`, `completion_tokens_details` likewise):
   * the input ones are part of `promptTokens`, the output ones of `completionTokens`. Absent when
   * not reported. Billed at the model's audio and image prices where it has them, else as input
   * or output (chat-pricing.ts).
   */
  /**
   * The tool calls the answer made (entries of its `tool_calls`), counted by the gateway from
   * the answer it relayed; absent when it made none. Billed at `per_tool_call`.
   */
  toolCalls?: number;
  audioInputTokens?: number;
  imageInputTokens?: number;
  audioOutputTokens?: number;
  imageOutputTokens?: number;
  /**
   * The `service_tier` the upstream reports it served the request on (`flex`, `priority`): the
   * model's `service_tiers` table of that name prices it, else the base prices.
   */
  serviceTier?: string;
}
