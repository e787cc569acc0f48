import type { ChatUsage } from '../../chat/chat-types.js';
import type { ProviderDialectName } from '../../config/schema.js';
import type { UpstreamUsage } from './chat-schemas.js';

/**
 * What differs between providers that all speak OpenAI's chat completions (docs/providers.md):
 * where each reports its usage, which request fields each takes, and what each requires back
 * in the next turn of a tool loop. Chosen by the upstream's `dialect`; everything else about the
 * protocol is the same. The rules are data (and small usage readers): dialect-request.ts
 * applies the request rules, thought-signatures.ts the signatures.
 */
export interface ProviderDialect {
  readonly name: ProviderDialectName;
  /**
   * What becomes of an assistant message's `reasoning_content` (the reasoning an OpenAI client
   * library keeps on the message it sends back):
   * - `forward`: sent as given: the provider reads it back (Kimi, GLM).
   * - `tool_turns`: sent within a user turn whose assistant called tools, where the provider
   *   requires it, and left out elsewhere, where it ignores it (DeepSeek).
   * - `dropped`: never sent: the provider's messages have no such field (OpenAI, Qwen, Gemini).
   * Applied by dialect-request.ts.
   */
  readonly reasoningHistory: 'forward' | 'tool_turns' | 'dropped';
  /**
   * What becomes of the request's `thinking` (`{type: "enabled" | "disabled", budget_tokens?}`,
   * DeepSeek's, GLM's and Kimi's switch):
   * - `native`: sent as given.
   * - `enable_thinking`: Qwen's switch, `enable_thinking` (and `thinking_budget`).
   * - `{effort: …}`: sent as `reasoning_effort` (the provider's reasoning switch): enabled, the
   *   first level whose budget covers the one asked (the last above them all; `medium` without
   *   a budget); disabled, `disabled` (or nothing: the upstream's default). A caller's own
   *   `reasoning_effort` is kept instead: it is the field the provider names.
   */
  readonly thinking: 'native' | 'enable_thinking' | { readonly effort: EffortTranslation };
  /** Whether the provider takes `video_url` content parts; else such a part is refused (400). */
  readonly videoParts: boolean;
  /**
   * Whether the provider's tool calls carry a thought signature
   * (`extra_content.google.thought_signature`, Gemini) that must come back with the call:
   * sealed for the caller and opened on the way back (thought-signatures.ts).
   */
  readonly thoughtSignatures: boolean;
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

/** How `thinking` becomes `reasoning_effort` (`ProviderDialect.thinking`). */
export interface EffortTranslation {
  /** The levels by the most thinking tokens each stands for, smallest first. */
  readonly levels: readonly { readonly effort: string; readonly budget: number }[];
  /** The level that turns reasoning off; none: a disabled `thinking` sends nothing. */
  readonly disabled?: string;
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
 * OpenAI's reading: input counts cache reads (and writes), audio and image tokens; output counts
 * reasoning, audio and image tokens. A detail above its total is a contradiction, never a
 * negative line item. (Audio and image input may overlap the cache reads, which count tokens of
 * every kind: how much of them is billed at their own price is chat-pricing.ts's rule.)
 */
function openAiReading(raw: UpstreamUsage, extra: { cacheWriteTokens?: number } = {}) {
  const cachedTokens = cacheReads(raw);
  const reasoningTokens = raw.completion_tokens_details?.reasoning_tokens ?? 0;
  const written = extra.cacheWriteTokens ?? 0;
  const modalities = modalityTokens(raw);
  const modalOutput = (modalities.audioOutputTokens ?? 0) + (modalities.imageOutputTokens ?? 0);
  const modalInput = (modalities.audioInputTokens ?? 0) + (modalities.imageInputTokens ?? 0);
  if (
    cachedTokens + written > raw.prompt_tokens ||
    modalInput > raw.prompt_tokens ||
    reasoningTokens + modalOutput > raw.completion_tokens
  )
    return undefined;
  return {
    promptTokens: raw.prompt_tokens,
    completionTokens: raw.completion_tokens,
    cachedTokens,
    reasoningTokens,
    ...(extra.cacheWriteTokens === undefined ? {} : { cacheWriteTokens: extra.cacheWriteTokens }),
    ...modalities,
  } satisfies ChatUsage;
}

/** The audio and image counts a provider reports apart (OpenAI, Qwen's Omni and VL models). */
function modalityTokens(
  raw: UpstreamUsage,
): Pick<
  ChatUsage,
  'audioInputTokens' | 'imageInputTokens' | 'audioOutputTokens' | 'imageOutputTokens'
> {
  const counts = {
    audioInputTokens: raw.prompt_tokens_details?.audio_tokens,
    imageInputTokens: raw.prompt_tokens_details?.image_tokens,
    audioOutputTokens: raw.completion_tokens_details?.audio_tokens,
    imageOutputTokens: raw.completion_tokens_details?.image_tokens,
  };
  // A count of 0 or none says nothing: the usage record keeps only counts reported above 0.
  return Object.fromEntries(
    Object.entries(counts).filter(([, count]) => count != null && count > 0),
  );
}

/**
 * OpenAI, and any server that copies it (the default dialect). OpenAI's assistant messages have
 * no `reasoning_content` and its requests no `thinking`: its reasoning switch is
 * `reasoning_effort` (platform.openai.com/docs/api-reference/chat/create), which a thinking
 * budget becomes as the Messages dialect already translates it (docs/anthropic-messages.md). Its
 * content parts have no video, but servers of this dialect do (vLLM, the simulator): a video
 * part reaches it only where the operator enabled `video_input` for the model, as configured
 * fields do (chat/request-fields.ts).
 */
const openai: ProviderDialect = {
  name: 'openai',
  streamOptions: true,
  reasoningHistory: 'dropped',
  thinking: {
    effort: {
      levels: [
        { effort: 'low', budget: 4_095 },
        { effort: 'medium', budget: 16_383 },
        { effort: 'high', budget: Number.MAX_SAFE_INTEGER },
      ],
    },
  },
  videoParts: true,
  thoughtSignatures: false,
  usage: (raw) => openAiReading(raw),
};

/**
 * DeepSeek: `prompt_tokens` = `prompt_cache_hit_tokens` + `prompt_cache_miss_tokens`, the hits
 * billed at the cache price; counts that do not add up are a contradiction. Thinking mode
 * (api-docs.deepseek.com/guides/thinking_mode): `thinking: {type}` is its switch; between two
 * user messages where the model called tools, each assistant message's `reasoning_content` must
 * come back on every later request (else 400 "Missing `reasoning_content` field"), and where it
 * called none it is ignored (the older deepseek-reasoner refused it there with a 400:
 * api-docs.deepseek.com/guides/reasoning_model): `tool_turns`. Text input only: no video.
 */
const deepseek: ProviderDialect = {
  name: 'deepseek',
  streamOptions: true,
  tokenLimitField: 'max_tokens',
  reasoningHistory: 'tool_turns',
  thinking: 'native',
  videoParts: false,
  thoughtSignatures: false,
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
 * Thinking is switched by `enable_thinking` and capped by `thinking_budget`
 * (alibabacloud.com/help/en/model-studio/deep-thinking); its assistant messages carry `content`
 * and `tool_calls` only, so reasoning shown is not sent back. Qwen-VL takes `video_url` parts.
 */
const qwen: ProviderDialect = {
  name: 'qwen',
  streamOptions: true,
  tokenLimitField: 'max_tokens',
  reasoningHistory: 'dropped',
  thinking: 'enable_thinking',
  videoParts: true,
  thoughtSignatures: false,
  usage: (raw) => {
    const written = raw.prompt_tokens_details?.cache_creation_input_tokens;
    return openAiReading(raw, written == null ? {} : { cacheWriteTokens: written });
  },
};

/**
 * Zhipu GLM: OpenAI's fields; a stream's usage comes in its last chunk unasked. `thinking:
 * {type}` is its switch; with interleaved thinking "thinking blocks should be explicitly
 * preserved and returned together with the tool results" (docs.z.ai/guides/capabilities/
 * thinking-mode): `reasoning_content` goes back as given (a dropped one is not refused). GLM-V
 * takes `video_url` parts.
 */
const glm: ProviderDialect = {
  name: 'glm',
  streamOptions: false,
  tokenLimitField: 'max_tokens',
  reasoningHistory: 'forward',
  thinking: 'native',
  videoParts: true,
  thoughtSignatures: false,
  usage: (raw) => openAiReading(raw),
};

/**
 * Moonshot Kimi: cache reads in a top-level `cached_tokens`; a stream's usage in its last
 * chunk's `choices[0].usage` (chat.ts lifts it onto the chunk). Its thinking models keep
 * `reasoning_content` in the context (platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model):
 * an assistant tool call without it is a 400 "thinking is enabled but reasoning_content is
 * missing in assistant tool call message"; `thinking: {type}` is its switch. K2.5 takes
 * `video_url` parts.
 */
const kimi: ProviderDialect = {
  name: 'kimi',
  streamOptions: true,
  tokenLimitField: 'max_tokens',
  reasoningHistory: 'forward',
  thinking: 'native',
  videoParts: true,
  thoughtSignatures: false,
  usage: (raw) => openAiReading(raw),
};

/**
 * Gemini's OpenAI-compatible endpoint: refuses `stream_options` (its streams end with usage
 * unasked), and counts thinking tokens only in `total_tokens`: what `total_tokens` has beyond
 * input and output is reasoning, billed as output is. Its tool calls carry a thought signature
 * that must come back unchanged with the call (Gemini 3: 400 "Function call is missing a
 * thought_signature": ai.google.dev/gemini-api/docs/thought-signatures). Thinking is
 * `reasoning_effort` (ai.google.dev/gemini-api/docs/openai#thinking), and a field it does not
 * know is refused by name (as `stream_options` is): `thinking` is translated, and neither
 * `reasoning_content` (its messages have none) nor `video_url` parts (it documents none in this
 * endpoint) are sent.
 */
const gemini: ProviderDialect = {
  name: 'gemini',
  streamOptions: false,
  tokenLimitField: 'max_tokens',
  reasoningHistory: 'dropped',
  // Its OpenAI compatibility's table: ai.google.dev/gemini-api/docs/openai#thinking.
  thinking: {
    effort: {
      levels: [
        { effort: 'low', budget: 1_024 },
        { effort: 'medium', budget: 8_192 },
        { effort: 'high', budget: 24_576 },
      ],
      disabled: 'none',
    },
  },
  videoParts: false,
  thoughtSignatures: true,
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
