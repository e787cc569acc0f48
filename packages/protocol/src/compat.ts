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

/**
 * Token prices per 1 000 000 tokens, micro-yuan. In a tier or a service tier a field left out
 * takes the base's value; where none gives it, cache reads and writes cost the input price and
 * reasoning the output price, and audio and image tokens are billed as input or output.
 */
export interface TokenPriceFields {
  input_per_million_tokens?: MicroYuan;
  /** Cache reads. */
  cached_input_per_million_tokens?: MicroYuan;
  /** Writes to the 5-minute prompt cache. */
  cache_write_per_million_tokens?: MicroYuan;
  /** Writes to the 1-hour prompt cache. */
  cache_write_1h_per_million_tokens?: MicroYuan;
  output_per_million_tokens?: MicroYuan;
  reasoning_per_million_tokens?: MicroYuan;
  /** Uncached audio input tokens; absent: billed as input. */
  audio_input_per_million_tokens?: MicroYuan;
  /** Uncached image input tokens; absent: billed as input. */
  image_input_per_million_tokens?: MicroYuan;
  /** Audio output tokens; absent: billed as output. */
  audio_output_per_million_tokens?: MicroYuan;
  /** Image output tokens; absent: billed as output. */
  image_output_per_million_tokens?: MicroYuan;
}

/** A length tier: the whole request at `prices` when its input tokens are above `above_input_tokens`. */
export interface PriceTier {
  above_input_tokens: number;
  prices: TokenPriceFields;
}

/** A service tier's prices: its fields over the base ones, and its own length tiers. */
export interface ServiceTierPricing extends TokenPriceFields {
  tiers?: PriceTier[];
}

/** A model's current prices (`docs/billing.md`); amounts are integer micro-yuan. */
export interface ModelPricing extends TokenPriceFields {
  currency: Currency;
  /** Present on token-billed models: the token fields are per million tokens. */
  unit?: 'per_million_tokens';
  price_version: string;
  /**
   * Chat: whole-request tiers by input length, ascending; a request whose input tokens are above
   * a tier's `above_input_tokens` is priced entirely at the highest such tier's prices.
   */
  tiers?: PriceTier[];
  /** Chat: a fee added to every request, micro-yuan. */
  per_request?: MicroYuan;
  /** Chat: a fee per tool call the answer makes, micro-yuan. */
  per_tool_call?: MicroYuan;
  /** Chat: the prices of a request the upstream served on that `service_tier`. */
  service_tiers?: Record<string, ServiceTierPricing>;
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
