/**
 * Anthropic Messages API bodies (`POST /v1/messages`, `POST /v1/messages/count_tokens`), as
 * Tollgate answers them on its chat core (docs/anthropic-messages.md). They keep Anthropic's own
 * field names. Optional fields are left out, never `null`, unless the type says `| null`.
 */

/** Why the answer stopped; `null` only when the upstream gave no finish reason. */
export type AnthropicStopReason =
  'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

/**
 * Token counts, Anthropic's way: `input_tokens` excludes the cached input read
 * (`cache_read_input_tokens`), so the prompt is their sum. A chat upstream reports no cache
 * writes: `cache_creation_input_tokens` is 0.
 */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
}

/**
 * The upstream's reasoning. `signature` is Tollgate's (`tollgate.v1.` + base64url SHA-256 of
 * `thinking`): not a secret, it marks a block that came through a chat-completions upstream, so
 * that the block can be sent back in a later turn.
 */
export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  /** The upstream's tool call id; send it back as `tool_result.tool_use_id`. */
  id: string;
  name: string;
  /** The tool call's arguments, parsed and checked to be a JSON object. */
  input: Record<string, unknown>;
}

/**
 * Anthropic's redacted thinking, from an Anthropic upstream: `data` is opaque (Tollgate's sealed
 * token, docs/agents.md "Opaque reasoning"); give it back unchanged.
 */
export interface AnthropicRedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

/** In this order: thinking (Tollgate's or its upstream's), text (at most one), then tool uses. */
export type AnthropicContentBlock =
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicTextBlock
  | AnthropicToolUseBlock;

/** `POST /v1/messages` without `stream`; also the record's body of a streamed one. */
export interface AnthropicMessage {
  /** `msg_` and the request id without its `req_` prefix. */
  id: string;
  type: 'message';
  role: 'assistant';
  /** The model id the caller named. */
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason | null;
  /** Always `null`: a chat upstream does not say which stop sequence ended the answer. */
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

/** `POST /v1/messages/count_tokens`: an estimate (docs/anthropic-messages.md, "count_tokens"). */
export interface AnthropicTokenCount {
  input_tokens: number;
}

/** Anthropic's error types, one per HTTP status (docs/anthropic-messages.md, "Errors"). */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'api_error'
  | 'overloaded_error';

/** Every error answer of the two routes. */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: AnthropicErrorType; message: string };
  /** Our `X-Service-Request-Id`. */
  request_id: string;
}

/** The `data` of a streamed `event: error` (Anthropic sends no request id there). */
export interface AnthropicStreamError {
  type: 'error';
  error: { type: AnthropicErrorType; message: string };
}

/** The `data` of each named event of a stream, in Anthropic's order. */
export type AnthropicStreamEvent =
  | { type: 'message_start'; message: AnthropicMessage }
  | { type: 'ping' }
  | {
      type: 'content_block_start';
      index: number;
      content_block: AnthropicContentBlock;
    }
  | {
      type: 'content_block_delta';
      index: number;
      delta:
        | { type: 'text_delta'; text: string }
        | { type: 'thinking_delta'; thinking: string }
        | { type: 'signature_delta'; signature: string }
        | { type: 'input_json_delta'; partial_json: string };
    }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: AnthropicStopReason | null; stop_sequence: string | null };
      usage: AnthropicUsage;
    }
  | { type: 'message_stop' }
  | AnthropicStreamError;
