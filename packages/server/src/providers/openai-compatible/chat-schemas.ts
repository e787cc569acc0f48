import { z } from 'zod';
import { servedTierSchema } from '../served-tier.js';

/**
 * Upstream chat bodies, parsed at the boundary. Zod drops every field not named here, so what
 * reaches a caller is rebuilt from checked values only.
 */
const tokens = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

export const usageSchema = z.object({
  prompt_tokens: tokens,
  completion_tokens: tokens,
  total_tokens: tokens.optional(),
  prompt_tokens_details: z
    .object({
      cached_tokens: tokens.nullish(),
      /** Qwen's explicit-cache writes. */
      cache_creation_input_tokens: tokens.nullish(),
      audio_tokens: tokens.nullish(),
      image_tokens: tokens.nullish(),
    })
    .nullish(),
  completion_tokens_details: z
    .object({
      reasoning_tokens: tokens.nullish(),
      audio_tokens: tokens.nullish(),
      image_tokens: tokens.nullish(),
    })
    .nullish(),
  /** DeepSeek's cache read (and miss) counts, where OpenAI has `prompt_tokens_details`. */
  prompt_cache_hit_tokens: tokens.nullish(),
  prompt_cache_miss_tokens: tokens.nullish(),
  /** Moonshot Kimi's cache reads. */
  cached_tokens: tokens.nullish(),
});

/**
 * Gemini's thought signature on a tool call (`extra_content.google.thought_signature`): opaque,
 * carried back sealed (thought-signatures.ts). Only the signature is kept of `extra_content`;
 * one of another shape is left out (it is not what the answer is billed on, and no caller could
 * send it back usefully), never a reason to distrust the answer.
 */
const extraContentSchema = z
  .object({ google: z.object({ thought_signature: z.string().min(1).max(1_048_576) }) })
  .optional()
  .catch(undefined);

const toolCallSchema = z.object({
  id: z.string().max(200),
  type: z.literal('function'),
  function: z.object({ name: z.string().max(200), arguments: z.string() }),
  extra_content: extraContentSchema,
});

export const completionSchema = z.object({
  id: z.string().max(200).optional(),
  created: z.number().int().optional(),
  choices: z
    .array(
      z.object({
        index: z.number().int().nonnegative(),
        message: z.object({
          role: z.literal('assistant'),
          content: z.string().nullable(),
          reasoning_content: z.string().nullish(),
          refusal: z.string().nullish(),
          tool_calls: z.array(toolCallSchema).nullish(),
        }),
        finish_reason: z.string().max(40).nullable(),
      }),
    )
    .min(1),
  usage: usageSchema,
  service_tier: servedTierSchema,
});

export const chunkSchema = z.object({
  id: z.string().max(200).optional(),
  created: z.number().int().optional(),
  choices: z.array(
    z.object({
      index: z.number().int().nonnegative(),
      delta: z.object({
        role: z.literal('assistant').nullish(),
        content: z.string().nullish(),
        reasoning_content: z.string().nullish(),
        refusal: z.string().nullish(),
        tool_calls: z
          .array(
            z.object({
              index: z.number().int().nonnegative(),
              id: z.string().max(200).optional(),
              type: z.literal('function').optional(),
              function: z
                .object({ name: z.string().max(200).optional(), arguments: z.string().optional() })
                .optional(),
              extra_content: extraContentSchema,
            }),
          )
          .nullish(),
      }),
      finish_reason: z.string().max(40).nullish(),
      /** Moonshot Kimi puts a stream's usage here, in its last chunk's choice. */
      usage: usageSchema.nullish(),
    }),
  ),
  usage: usageSchema.nullish(),
  service_tier: servedTierSchema,
});

export type UpstreamUsage = z.output<typeof usageSchema>;
export type UpstreamCompletion = z.output<typeof completionSchema>;
export type UpstreamChunk = z.output<typeof chunkSchema>;
export type ToolCallExtraContent = NonNullable<z.output<typeof extraContentSchema>>;
