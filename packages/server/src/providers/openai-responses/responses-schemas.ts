import { z } from 'zod';
import { servedTierSchema } from '../served-tier.js';

/**
 * A Responses upstream's bodies and stream events, parsed at the boundary. Zod drops every field
 * not named here, so what reaches a caller is rebuilt from checked values only; a reasoning item
 * keeps exactly the fields the upstream needs back (`id`, `summary`, `content`,
 * `encrypted_content`).
 */
const tokens = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const text = z.string();

export const responsesUsageSchema = z.object({
  input_tokens: tokens,
  input_tokens_details: z.object({ cached_tokens: tokens.optional() }).nullish(),
  output_tokens: tokens,
  output_tokens_details: z.object({ reasoning_tokens: tokens.optional() }).nullish(),
  total_tokens: tokens.optional(),
});

export const reasoningItemSchema = z.object({
  type: z.literal('reasoning'),
  id: z.string().max(400),
  summary: z.array(z.object({ type: z.literal('summary_text'), text })),
  content: z.array(z.object({ type: z.literal('reasoning_text'), text })).nullish(),
  encrypted_content: z.string().nullish(),
});

const messageItemSchema = z.object({
  type: z.literal('message'),
  role: z.literal('assistant'),
  content: z.array(
    z.discriminatedUnion('type', [
      z.object({ type: z.literal('output_text'), text }),
      z.object({ type: z.literal('refusal'), refusal: text }),
    ]),
  ),
});

export const functionCallItemSchema = z.object({
  type: z.literal('function_call'),
  call_id: z.string().min(1).max(200),
  name: z.string().max(200),
  arguments: z.string(),
});

export const outputItemSchema = z.discriminatedUnion('type', [
  reasoningItemSchema,
  messageItemSchema,
  functionCallItemSchema,
]);

export const responseSchema = z.object({
  status: z.enum(['completed', 'incomplete']),
  incomplete_details: z.object({ reason: z.string().max(100) }).nullish(),
  output: z.array(outputItemSchema),
  usage: responsesUsageSchema,
  /** The tier the response was served on (`default`, `flex`, `priority`), billed as served. */
  service_tier: servedTierSchema,
});

/**
 * The answer of `POST /v1/responses/compact`: the items that replace the history (the caller's
 * messages, kept, and the upstream's encrypted summary of the rest) and the usage of the call.
 */
export const compactionAnswerSchema = z.object({
  output: z.array(
    z.discriminatedUnion('type', [
      z.object({
        type: z.literal('message'),
        role: z.enum(['user', 'assistant', 'developer', 'system']),
        content: z.array(z.object({ type: z.enum(['input_text', 'output_text']), text })),
      }),
      z.object({
        type: z.literal('compaction'),
        id: z.string().max(400).nullish(),
        encrypted_content: z.string(),
      }),
    ]),
  ),
  usage: responsesUsageSchema,
});

/** The stream events this adapter reads; others (`*.done` of parts, `in_progress`) carry nothing new. */
export const streamEventSchemas = {
  'response.output_item.added': z.object({
    output_index: tokens,
    item: z.looseObject({ type: z.string() }),
  }),
  'response.output_item.done': z.object({
    output_index: tokens,
    item: z.looseObject({ type: z.string() }),
  }),
  'response.output_text.delta': z.object({ delta: text }),
  'response.refusal.delta': z.object({ delta: text }),
  'response.reasoning_summary_text.delta': z.object({ delta: text }),
  'response.reasoning_text.delta': z.object({ delta: text }),
  'response.reasoning_summary_part.added': z.object({ summary_index: tokens }),
  'response.function_call_arguments.delta': z.object({ output_index: tokens, delta: text }),
  'response.completed': z.object({ response: responseSchema }),
  'response.incomplete': z.object({ response: responseSchema }),
} as const;

export type ResponsesUsage = z.output<typeof responsesUsageSchema>;
export type ResponsesAnswer = z.output<typeof responseSchema>;
export type ReasoningItem = z.output<typeof reasoningItemSchema>;
