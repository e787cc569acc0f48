import { z } from 'zod';

/**
 * The body of `POST /v1/messages` (Anthropic's Messages API) as a schema, from which its type is
 * derived. It says the shape and Anthropic's own rules only; every rule the chat core already
 * has (token limits, the stop list's length, tool names, schema limits, tool continuation, the
 * model's input size) is checked by the chat validator on the translated body
 * (to-chat-body.ts), whose errors are renamed back to these fields (chat-error-paths.ts).
 * Objects are strict: a field this gateway does not understand is a 400 naming it, never dropped.
 */

const REFUSED_TOOL =
  'only custom tools (name, description, input_schema) are accepted: server tools such as web_search, bash, text_editor or computer run on Anthropic’s side, which a chat-completions upstream cannot do';
const notCarried = (what: string) => z.never({ error: what }).optional();

/** A prompt-cache hint: accepted and not forwarded to a chat upstream (docs/anthropic-messages.md). */
const cacheControl = z
  .strictObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() })
  .nullish();

const textBlock = z.strictObject({
  type: z.literal('text'),
  text: z.string(),
  cache_control: cacheControl,
  // Citations come from documents and search results, which a chat upstream is not given.
  citations: z.array(z.unknown()).max(0, 'citations are not supported here').nullish(),
});

const imageBlock = z.strictObject({
  type: z.literal('image'),
  source: z.discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('base64'),
      media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
      data: z.string().min(1),
    }),
    z.strictObject({ type: z.literal('url'), url: z.string().min(1) }),
  ]),
  cache_control: cacheControl,
});

const toolResultBlock = z.strictObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z
    .union([z.string(), z.array(z.discriminatedUnion('type', [textBlock, imageBlock]))])
    .optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});

const toolUseBlock = z.strictObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});

const thinkingBlock = z.strictObject({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string(),
});

const redactedThinkingBlock = z.strictObject({
  type: z.literal('redacted_thinking'),
  data: z.string(),
});

const userMessage = z.strictObject({
  role: z.literal('user'),
  content: z.union([
    z.string(),
    z.array(z.discriminatedUnion('type', [textBlock, imageBlock, toolResultBlock])).min(1),
  ]),
});

const assistantMessage = z.strictObject({
  role: z.literal('assistant'),
  content: z.union([
    z.string(),
    z.array(
      z.discriminatedUnion('type', [textBlock, toolUseBlock, thinkingBlock, redactedThinkingBlock]),
    ),
  ]),
});

/**
 * A system turn inside `messages` (Claude Code sends its environment there): a system message
 * at that place in the conversation.
 */
const systemMessage = z.strictObject({
  role: z.literal('system'),
  content: z.union([z.string(), z.array(textBlock).min(1)]),
});

const customTool = z.strictObject({
  type: z.literal('custom', { error: REFUSED_TOOL }).optional(),
  name: z.string(),
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal('object') }),
  cache_control: cacheControl,
  /**
   * Anthropic's tool search loads such a tool on demand; a chat upstream has no tool search, so
   * the tool is offered like any other (named in `X-Tollgate-Dropped-Fields`).
   */
  defer_loading: z.boolean().nullish(),
});

const parallel = { disable_parallel_tool_use: z.boolean().optional() };
const toolChoice = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('auto'), ...parallel }),
  z.strictObject({ type: z.literal('any'), ...parallel }),
  z.strictObject({ type: z.literal('tool'), name: z.string(), ...parallel }),
  z.strictObject({ type: z.literal('none') }),
]);

/** `omitted`: the answer carries no thinking blocks (docs/anthropic-messages.md, "Thinking"). */
const thinkingDisplay = z.enum(['summarized', 'omitted']).nullish();

const thinking = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('enabled'),
    budget_tokens: z.number().int().min(1_024, 'must be at least 1024'),
    display: thinkingDisplay,
  }),
  z.strictObject({ type: z.literal('disabled') }),
  z.strictObject({ type: z.literal('adaptive'), display: thinkingDisplay }),
]);

const outputConfig = z.strictObject({
  effort: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).nullish(),
  format: z
    .strictObject({
      type: z.literal('json_schema'),
      schema: z.record(z.string(), z.unknown()),
    })
    .nullish(),
});

/** The fields a count and a message share. */
const messagesFields = {
  model: z.string().min(1),
  messages: z
    .array(z.discriminatedUnion('role', [userMessage, assistantMessage, systemMessage]))
    .min(1),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  tools: z.array(customTool).optional(),
  tool_choice: toolChoice.optional(),
  thinking: thinking.optional(),
  output_config: outputConfig.optional(),
  /** A top-level prompt-cache hint: accepted, not forwarded. */
  cache_control: cacheControl,
  top_k: notCarried(
    'is not carried by a chat-completions upstream (it has no top_k); leave it out',
  ),
  container: notCarried('code-execution containers run on Anthropic’s side; leave it out'),
  mcp_servers: notCarried(
    'MCP servers are connected by Anthropic’s side, which a chat-completions upstream cannot do; leave it out',
  ),
};

export const messagesBodySchema = z.strictObject({
  ...messagesFields,
  // The range and the model's bound are the chat validator's rules.
  max_tokens: z.number(),
  stream: z.boolean().optional(),
  // Anthropic's range (a chat upstream takes 0 to 2).
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().optional(),
  stop_sequences: z.array(z.string()).optional(),
  metadata: z.strictObject({ user_id: z.string().nullish() }).optional(),
  /** Capacity choice: dropped (the model's price is the price), named in the header. */
  service_tier: z.enum(['auto', 'standard_only']).optional(),
  /** Server-side context editing: dropped (the upstream reads the whole context), named. */
  context_management: z.record(z.string(), z.unknown()).nullish(),
});

/** `count_tokens` takes the same body less what only generation needs. */
export const countTokensBodySchema = z.strictObject({
  ...messagesFields,
  context_management: z.record(z.string(), z.unknown()).nullish(),
});

export type MessagesBody = z.output<typeof messagesBodySchema>;
export type CountTokensBody = z.output<typeof countTokensBodySchema>;
export type UserBlock = Exclude<z.output<typeof userMessage>['content'], string>[number];
export type AssistantBlock = Exclude<z.output<typeof assistantMessage>['content'], string>[number];
export type ToolResultBlock = z.output<typeof toolResultBlock>;
