/*
 * Request and answer shapes of the text family (OpenAI-compatible; docs/chat.md). The spec
 * leaves most of these fields open (4.6), so only what the SDK and its callers rely on is
 * typed; everything else passes through untouched.
 */

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } }
  | { type: 'video_url'; video_url: { url: string } };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

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

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  [field: string]: unknown;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: number;
    message: {
      role: 'assistant';
      content: string | null;
      /** `null` when the upstream sent `null` (the gateway passes it on as it came). */
      tool_calls?: ChatToolCall[] | null;
      reasoning_content?: string | null;
      refusal?: string | null;
    };
    finish_reason: string | null;
  }[];
  usage?: ChatUsage;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: {
    index: number;
    delta: {
      role?: 'assistant' | null;
      content?: string | null;
      reasoning_content?: string | null;
      refusal?: string | null;
      /** Pieces of tool calls: `arguments` arrives in parts, `id` and `name` with the first. */
      tool_calls?:
        | {
            index: number;
            id?: string;
            type?: 'function';
            function?: { name?: string; arguments?: string };
          }[]
        | null;
    };
    /** Left out by some upstreams on chunks before the last. */
    finish_reason?: string | null;
  }[];
  /** Present on the last chunk when `stream_options.include_usage` was asked. */
  usage?: ChatUsage | null;
}

export interface EmbeddingParams {
  model: string;
  input: string | string[];
  dimensions?: number;
  encoding_format?: 'float' | 'base64';
  [field: string]: unknown;
}

export interface EmbeddingList {
  object: 'list';
  model: string;
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  usage: { prompt_tokens: number; total_tokens: number };
}

export interface RerankParams {
  model: string;
  query: string;
  documents: (string | { text: string })[];
  top_n?: number;
  return_documents?: boolean;
  [field: string]: unknown;
}

export interface RerankResult {
  model?: string;
  results: { index: number; relevance_score: number; document?: { text: string } }[];
  usage?: { total_tokens: number; [field: string]: unknown };
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
