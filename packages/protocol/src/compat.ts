/**
 * OpenAI-compatible bodies (chat completions and their chunks, embeddings, the model list) and
 * the Cohere/Jina-style rerank answer. They keep the upstream conventions' own field names and
 * types (`created` is Unix seconds). Optional fields are left out, never `null`, unless the type
 * says `| null`.
 */
import type { Currency, MicroYuan } from './money.js';

/** Token counts of a chat answer, as OpenAI reports them. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens?: number };
  completion_tokens_details: { reasoning_tokens?: number };
}

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatCompletionMessage {
  role: 'assistant';
  content: string | null;
  reasoning_content?: string | null;
  refusal?: string | null;
  tool_calls?: ChatToolCall[] | null;
}

/** `POST /v1/chat/completions` without `stream`. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  /** Unix seconds. */
  created: number;
  model: string;
  choices: {
    index: number;
    message: ChatCompletionMessage;
    finish_reason: string | null;
  }[];
  usage: ChatUsage;
}

/** One `data:` event of a streamed chat completion. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  /** Unix seconds. */
  created: number;
  model: string;
  choices: {
    index: number;
    delta: {
      role?: 'assistant' | null;
      content?: string | null;
      reasoning_content?: string | null;
      refusal?: string | null;
      tool_calls?:
        | {
            index: number;
            id?: string;
            type?: 'function';
            function?: { name?: string; arguments?: string };
          }[]
        | null;
    };
    finish_reason?: string | null;
  }[];
  /** Present on every chunk when `stream_options.include_usage` is true; `null` until the last. */
  usage?: ChatUsage | null;
}

/** `POST /v1/embeddings`. */
export interface EmbeddingList {
  object: 'list';
  data: {
    object: 'embedding';
    index: number;
    /** Floats, or little-endian float32 bytes in base64 with `encoding_format: "base64"`. */
    embedding: number[] | string;
  }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

/** `POST /v1/rerank`. */
export interface RerankResponse {
  id: string;
  object: 'rerank';
  model: string;
  results: { index: number; relevance_score: number; document?: { text: string } }[];
  usage: { total_tokens: number };
}

export type ModelFamily = 'chat' | 'ocr' | 'embeddings' | 'rerank' | 'images' | 'videos' | 'h3';

export type ChatFeature =
  'image_input' | 'video_input' | 'tools' | 'thinking' | 'structured_output' | 'streaming';

/** A model's current prices (`docs/billing.md`); amounts are integer micro-yuan. */
export interface ModelPricing {
  currency: Currency;
  /** Present on token-billed models: the token fields are per million tokens. */
  unit?: 'per_million_tokens';
  price_version: string;
  input_per_million_tokens?: MicroYuan;
  cached_input_per_million_tokens?: MicroYuan;
  output_per_million_tokens?: MicroYuan;
  reasoning_per_million_tokens?: MicroYuan;
  /** The unit of each task price field present. */
  units?: Record<string, 'per_image' | 'per_second' | 'count'>;
  per_image?: Record<string, Record<string, MicroYuan>>;
  per_second?: Record<string, MicroYuan>;
  per_second_with_audio?: Record<string, MicroYuan>;
  per_reference_image?: MicroYuan;
  free_reference_images?: number;
}

/** One entry of `GET /v1/models`: OpenAI's fields plus capabilities and pricing. */
export interface Model {
  id: string;
  object: 'model';
  /** Unix seconds. */
  created: number;
  owned_by: string;
  capabilities: {
    families: ModelFamily[];
    /** Chat models: the enabled combinations of features. */
    combinations?: ChatFeature[][];
    images?: {
      sizes: string[];
      qualities: string[];
      max_images: number;
      max_reference_images: number;
    };
    videos?: {
      sizes: string[];
      seconds: number[];
      generate_audio: boolean;
      max_reference_images: number;
    };
  };
  pricing: ModelPricing;
}

/** `GET /v1/models`: exactly the models this key may call. */
export interface ModelList {
  object: 'list';
  data: Model[];
}
