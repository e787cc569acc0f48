import { z } from 'zod';
import { servedTierSchema } from '../served-tier.js';

/**
 * Anthropic Messages bodies and stream events, parsed at the boundary (docs/agents.md, "Anthropic
 * upstreams"). Zod drops every field not named here, so what reaches a caller is rebuilt from
 * checked values only. A block or event type not listed fails the parse: the gateway sends no
 * server tools or documents, so anything else is an answer it cannot present truthfully.
 */
const tokens = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const id = z.string().min(1).max(200);
/** Tool names as Anthropic allows them (and the chat side's tool names are within this). */
const toolName = z.string().min(1).max(200);

/** Cache writes split by TTL (`cache_creation_input_tokens` is their total). */
const cacheCreationSchema = z.object({
  ephemeral_5m_input_tokens: tokens.nullish(),
  ephemeral_1h_input_tokens: tokens.nullish(),
});

/** The usage of a whole message (plain answers, `message_start`). */
export const messageUsageSchema = z.object({
  input_tokens: tokens,
  output_tokens: tokens,
  cache_creation_input_tokens: tokens.nullish(),
  cache_read_input_tokens: tokens.nullish(),
  cache_creation: cacheCreationSchema.nullish(),
  /** The tier Anthropic served the message on (`standard`, `priority`, `batch`). */
  service_tier: servedTierSchema,
});

/** `message_delta`'s usage: the output so far, and (lately) the input figures again. */
export const deltaUsageSchema = z.object({
  output_tokens: tokens,
  input_tokens: tokens.nullish(),
  cache_creation_input_tokens: tokens.nullish(),
  cache_read_input_tokens: tokens.nullish(),
  cache_creation: cacheCreationSchema.nullish(),
});

export const thinkingBlockSchema = z.object({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string(),
});
export const redactedThinkingBlockSchema = z.object({
  type: z.literal('redacted_thinking'),
  data: z.string(),
});

const textBlockSchema = z.object({ type: z.literal('text'), text: z.string() });
const toolUseBlockSchema = z.object({
  type: z.literal('tool_use'),
  id,
  name: toolName,
  input: z.record(z.string(), z.unknown()),
});

export const contentBlockSchema = z.discriminatedUnion('type', [
  textBlockSchema,
  thinkingBlockSchema,
  redactedThinkingBlockSchema,
  toolUseBlockSchema,
]);

/**
 * Why a message stopped. `pause_turn` (a long turn of server tools paused) and
 * `model_context_window_exceeded` cannot end a turn without server tools normally; both are read
 * as an answer cut short (`length`), billed on its usage.
 */
export const stopReasonSchema = z.enum([
  'end_turn',
  'stop_sequence',
  'max_tokens',
  'tool_use',
  'refusal',
  'pause_turn',
  'model_context_window_exceeded',
]);

export const messageSchema = z.object({
  id: id.optional(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  content: z.array(contentBlockSchema),
  stop_reason: stopReasonSchema.nullable(),
  usage: messageUsageSchema,
});

/** `message_start`'s message: no content yet, usage possibly left out. */
const startedMessageSchema = z.object({
  id: id.optional(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  usage: messageUsageSchema.optional(),
});

const index = z.number().int().nonnegative().max(10_000);

export const streamEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('message_start'), message: startedMessageSchema }),
  z.object({
    type: z.literal('content_block_start'),
    index,
    content_block: z.discriminatedUnion('type', [
      textBlockSchema,
      thinkingBlockSchema.extend({ signature: z.string().optional() }),
      redactedThinkingBlockSchema,
      toolUseBlockSchema.extend({ input: z.record(z.string(), z.unknown()).optional() }),
    ]),
  }),
  z.object({
    type: z.literal('content_block_delta'),
    index,
    delta: z.discriminatedUnion('type', [
      z.object({ type: z.literal('text_delta'), text: z.string() }),
      z.object({ type: z.literal('thinking_delta'), thinking: z.string() }),
      z.object({ type: z.literal('signature_delta'), signature: z.string() }),
      z.object({ type: z.literal('input_json_delta'), partial_json: z.string() }),
    ]),
  }),
  z.object({ type: z.literal('content_block_stop'), index }),
  z.object({
    type: z.literal('message_delta'),
    delta: z.object({ stop_reason: stopReasonSchema.nullish() }),
    usage: deltaUsageSchema.optional(),
  }),
  z.object({ type: z.literal('message_stop') }),
  z.object({ type: z.literal('ping') }),
  z.object({ type: z.literal('error'), error: z.unknown() }),
]);

export type MessageUsage = z.output<typeof messageUsageSchema>;
export type AnthropicMessage = z.output<typeof messageSchema>;
export type ContentBlock = z.output<typeof contentBlockSchema>;
export type StopReason = z.output<typeof stopReasonSchema>;
export type MessagesStreamEvent = z.output<typeof streamEventSchema>;
