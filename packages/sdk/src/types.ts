/*
 * Request and answer shapes of the text family (OpenAI-compatible; docs/chat.md). The spec
 * leaves most request fields open (4.6), so only what the SDK and its callers rely on is
 * typed; everything else passes through untouched.
 */
import type { ChatToolCall } from '@tollgate/protocol';

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  | { type: 'video_url'; video_url: { url: string } };

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string | ChatContentPart[] }
  | { role: 'user'; content: string | ChatContentPart[] }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: ChatToolCall[];
      reasoning_content?: string;
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/** `POST /v1/chat/completions` without `stream` (see `chat.stream` for streams). */
export interface ChatCompletionParams {
  model: string;
  messages: ChatMessage[];
  /** Personal assets given to the model (their ids), docs/assets.md. */
  assetIds?: string[];
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  tools?: unknown[];
  tool_choice?: unknown;
  response_format?: unknown;
  conversation_id?: string;
  [field: string]: unknown;
}

export interface EmbeddingParams {
  model: string;
  input: string | string[];
  dimensions?: number;
  encoding_format?: 'float' | 'base64';
  [field: string]: unknown;
}

export interface RerankParams {
  model: string;
  query: string;
  documents: (string | { text: string })[];
  top_n?: number;
  return_documents?: boolean;
  [field: string]: unknown;
}

/** Options every call takes. */
export interface CallOptions {
  /** Milliseconds to wait for the answer; the client's `timeoutMs` by default. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Options of a business POST: the key may be given (a UUID), else a new one is made and journaled. */
export interface PostOptions extends CallOptions {
  idempotencyKey?: string;
}

/** A JSON answer and what the gateway said about it. */
export interface WithMeta<T> {
  data: T;
  /** `X-Service-Request-Id`. */
  requestId: string | undefined;
  idempotencyKey: string | undefined;
  replayed: boolean;
}

/*
 * The answers are the wire types of `@tollgate/protocol` (the OpenAPI document's schemas are
 * generated from them), not copies.
 */
export type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatToolCall,
  ChatUsage,
  EmbeddingList,
  RerankResponse as RerankResult,
} from '@tollgate/protocol';
