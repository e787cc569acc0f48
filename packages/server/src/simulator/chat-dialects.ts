import type { ChatAnswer } from './chat.js';
import { WireError } from './wire-error.js';

export { dialectOfPath, type SimulatorDialect } from './dialect-path.js';
import type { SimulatorDialect } from './dialect-path.js';

/** Where a provider's stream carries its usage. */
export type StreamUsagePlace =
  /** A last chunk with no choices, only when `stream_options.include_usage` asks (OpenAI). */
  | 'usage_chunk'
  /** On the chunk with the finish reason, unasked (GLM, Gemini). */
  | 'finish_chunk'
  /** In the finish chunk's `choices[0].usage`, unasked (Moonshot Kimi). */
  | 'finish_choice';

export const STREAM_USAGE: Readonly<Record<SimulatorDialect, StreamUsagePlace>> = {
  openai: 'usage_chunk',
  deepseek: 'usage_chunk',
  qwen: 'usage_chunk',
  glm: 'finish_chunk',
  kimi: 'finish_choice',
  gemini: 'finish_chunk',
};

/** Fields Gemini's endpoint refuses by name, as it refuses any field it does not know. */
const GEMINI_UNKNOWN_FIELDS = ['stream_options', 'thinking'];

/**
 * The body as the shared chat parser reads it, in the provider's terms: Gemini's endpoint
 * refuses what it does not know (`stream_options`, and `thinking`: its switch is
 * `reasoning_effort`); Qwen switches thinking with `enable_thinking` only (a `thinking` field is
 * not its own, and changes nothing).
 */
export function readDialectBody(dialect: SimulatorDialect, body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  if (dialect === 'gemini')
    for (const field of GEMINI_UNKNOWN_FIELDS)
      if (field in body)
        throw new WireError(
          `Invalid JSON payload received. Unknown name "${field}": Cannot find field.`,
          { param: field, code: 'invalid_argument' },
        );
  if (dialect === 'qwen') {
    const {
      enable_thinking: enabled,
      thinking: _notQwens,
      ...rest
    } = body as Record<string, unknown>;
    return enabled === true ? { ...rest, thinking: { type: 'enabled' } } : rest;
  }
  return body;
}

/** The answer's usage as the provider writes it. */
export function dialectUsage(
  dialect: SimulatorDialect,
  usage: NonNullable<ChatAnswer['usage']>,
): Record<string, unknown> {
  const cached = usage.prompt_tokens_details.cached_tokens;
  const reasoning = usage.completion_tokens_details.reasoning_tokens;
  switch (dialect) {
    case 'openai':
    case 'qwen':
    case 'glm':
      return usage;
    case 'deepseek':
      return {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        total_tokens: usage.total_tokens,
        prompt_cache_hit_tokens: cached,
        prompt_cache_miss_tokens: usage.prompt_tokens - cached,
        completion_tokens_details: { reasoning_tokens: reasoning },
      };
    case 'kimi':
      return {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        total_tokens: usage.total_tokens,
        cached_tokens: cached,
      };
    case 'gemini':
      // Thinking tokens are counted in total_tokens only.
      return {
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens - reasoning,
        total_tokens: usage.total_tokens,
        ...(cached === 0 ? {} : { prompt_tokens_details: { cached_tokens: cached } }),
      };
  }
}
