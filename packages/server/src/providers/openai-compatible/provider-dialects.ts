import type { ChatUsage } from '../../chat/chat-types.js';
import type { ProviderDialectName } from '../../config/schema.js';
import type { UpstreamUsage } from './chat-schemas.js';

/**
 * What differs between providers that all speak OpenAI's chat completions (docs/providers.md):
 * where each reports its usage, and which request fields each takes. Chosen by the upstream's
 * `dialect`; everything else about the protocol is the same.
 */
export interface ProviderDialect {
  readonly name: ProviderDialectName;
  /**
   * Whether a stream's usage is asked for with `stream_options: {include_usage: true}`; a
   * provider that refuses the field sends its usage in the last chunk unasked.
   */
  readonly streamOptions: boolean;
  /** The output cap's field the provider takes, when it takes only one (else as configured). */
  readonly tokenLimitField?: 'max_tokens';
  /** The provider's usage in the internal record; `undefined` when its counts contradict. */
  usage(raw: UpstreamUsage): ChatUsage | undefined;
}

/**
 * Cache reads, wherever a provider puts them: `prompt_tokens_details.cached_tokens` (OpenAI,
 * Qwen, GLM, Gemini), `prompt_cache_hit_tokens` (DeepSeek), a top-level `cached_tokens`
 * (Moonshot Kimi). Each means the same thing wherever it stands, so every dialect reads them
 * all: an upstream behind a proxy that rewrites one into another is still billed right.
 */
function cacheReads(raw: UpstreamUsage): number {
  return (
    raw.prompt_tokens_details?.cached_tokens ??
    raw.prompt_cache_hit_tokens ??
    raw.cached_tokens ??
    0
  );
}

/**
 * OpenAI's reading: input counts cache reads (and writes), output counts reasoning. A detail
 * above its total is a contradiction, never a negative line item.
 */
function openAiReading(raw: UpstreamUsage, extra: { cacheWriteTokens?: number } = {}) {
  const cachedTokens = cacheReads(raw);
  const reasoningTokens = raw.completion_tokens_details?.reasoning_tokens ?? 0;
  const written = extra.cacheWriteTokens ?? 0;
  if (cachedTokens + written > raw.prompt_tokens || reasoningTokens > raw.completion_tokens)
    return undefined;
  return {
    promptTokens: raw.prompt_tokens,
    completionTokens: raw.completion_tokens,
    cachedTokens,
    reasoningTokens,
    ...(extra.cacheWriteTokens === undefined ? {} : { cacheWriteTokens: extra.cacheWriteTokens }),
  } satisfies ChatUsage;
}

const openai: ProviderDialect = {
  name: 'openai',
  streamOptions: true,
  usage: (raw) => openAiReading(raw),
};

/**
 * DeepSeek: `prompt_tokens` = `prompt_cache_hit_tokens` + `prompt_cache_miss_tokens`, the hits
 * billed at the cache price; counts that do not add up are a contradiction.
 */
const deepseek: ProviderDialect = {
  name: 'deepseek',
  streamOptions: true,
  tokenLimitField: 'max_tokens',
  usage: (raw) => {
    const hit = raw.prompt_cache_hit_tokens;
    const miss = raw.prompt_cache_miss_tokens;
    if (hit != null && miss != null && hit + miss !== raw.prompt_tokens) return undefined;
    return openAiReading(raw);
  },
};

/**
 * Qwen (DashScope's compatible mode): OpenAI's fields, plus explicit-cache writes in
 * `prompt_tokens_details.cache_creation_input_tokens` (a 5-minute cache), part of the input.
 */
const qwen: ProviderDialect = {
  name: 'qwen',
  streamOptions: true,
  tokenLimitField: 'max_tokens',
  usage: (raw) => {
    const written = raw.prompt_tokens_details?.cache_creation_input_tokens;
    return openAiReading(raw, written == null ? {} : { cacheWriteTokens: written });
  },
};

/** Zhipu GLM: OpenAI's fields; a stream's usage comes in its last chunk unasked. */
const glm: ProviderDialect = {
  name: 'glm',
  streamOptions: false,
  tokenLimitField: 'max_tokens',
  usage: (raw) => openAiReading(raw),
};

/**
 * Moonshot Kimi: cache reads in a top-level `cached_tokens`; a stream's usage in its last
 * chunk's `choices[0].usage` (chat.ts lifts it onto the chunk).
 */
const kimi: ProviderDialect = {
  name: 'kimi',
  streamOptions: true,
  tokenLimitField: 'max_tokens',
  usage: (raw) => openAiReading(raw),
};

/**
 * Gemini's OpenAI-compatible endpoint: refuses `stream_options` (its streams end with usage
 * unasked), and counts thinking tokens only in `total_tokens`: what `total_tokens` has beyond
 * input and output is reasoning, billed as output is.
 */
const gemini: ProviderDialect = {
  name: 'gemini',
  streamOptions: false,
  tokenLimitField: 'max_tokens',
  usage: (raw) => {
    const read = openAiReading(raw);
    if (read === undefined) return undefined;
    const thoughts = (raw.total_tokens ?? 0) - raw.prompt_tokens - raw.completion_tokens;
    if (thoughts <= 0 || read.reasoningTokens > 0) return read;
    return {
      ...read,
      completionTokens: read.completionTokens + thoughts,
      reasoningTokens: thoughts,
    };
  },
};

export const PROVIDER_DIALECTS: Readonly<Record<ProviderDialectName, ProviderDialect>> = {
  openai,
  deepseek,
  qwen,
  glm,
  kimi,
  gemini,
};
