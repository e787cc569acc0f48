import { z } from 'zod';
import { parseInput } from '../../../errors/input-schema.js';

/**
 * The body of `POST /v1/responses` (OpenAI's Responses API), as Tollgate serves it
 * (docs/agents.md, "Responses: what is served"). Every field OpenAI defines is either here or
 * refused by name: a field the gateway cannot honour is a 400, never dropped silently.
 */
const text = z.string().max(10_000_000);
const nullish = <T extends z.ZodType>(schema: T) => schema.nullish();

const inputText = z.strictObject({ type: z.literal('input_text'), text });
const inputImage = z.strictObject({
  type: z.literal('input_image'),
  image_url: nullish(text),
  file_id: nullish(z.string()),
  detail: nullish(z.enum(['auto', 'low', 'high'])),
});
const outputText = z.strictObject({
  type: z.literal('output_text'),
  text,
  annotations: z.array(z.unknown()).optional(),
  logprobs: z.array(z.unknown()).optional(),
});
const refusal = z.strictObject({ type: z.literal('refusal'), refusal: text });
const contentPart = z.discriminatedUnion('type', [inputText, inputImage, outputText, refusal], {
  error: 'must be input_text, input_image, output_text or refusal (input_file is not served)',
});

const itemStatus = nullish(z.enum(['in_progress', 'completed', 'incomplete']));
const message = z.strictObject({
  type: z.literal('message'),
  id: nullish(z.string()),
  status: itemStatus,
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([text, z.array(contentPart)]),
  /**
   * Codex CLI's own bookkeeping on its messages (a turn id) when it talks to its built-in OpenAI
   * provider: not forwarded, named once in `X-Tollgate-Dropped-Fields`.
   */
  internal_chat_message_metadata_passthrough: nullish(z.record(z.string().max(64), z.unknown())),
});
const functionCall = z.strictObject({
  type: z.literal('function_call'),
  id: nullish(z.string()),
  status: itemStatus,
  call_id: z.string().min(1).max(200),
  name: z.string().min(1).max(64),
  arguments: text,
});
const functionCallOutput = z.strictObject({
  type: z.literal('function_call_output'),
  id: nullish(z.string()),
  status: itemStatus,
  call_id: z.string().min(1).max(200),
  output: z.union([text, z.array(contentPart)]),
});
const reasoning = z.strictObject({
  type: z.literal('reasoning'),
  id: nullish(z.string()),
  status: itemStatus,
  summary: z.array(z.strictObject({ type: z.literal('summary_text'), text })),
  content: nullish(z.array(z.strictObject({ type: z.literal('reasoning_text'), text }))),
  encrypted_content: nullish(z.string()),
});
/** A compaction item `POST /v1/responses/compact` answered: it stands for the history it summarised. */
const compaction = z.strictObject({
  type: z.literal('compaction'),
  id: nullish(z.string()),
  encrypted_content: z.string(),
});
/**
 * Codex CLI's in-stream compaction (its `remote_compaction_v2`): the last input item asks for the
 * history before it as one compaction item (compaction-events.ts).
 */
const compactionTrigger = z.strictObject({ type: z.literal('compaction_trigger') });
/** An input item; a bare `{role, content}` is a message (OpenAI's "easy input message"). */
const inputItem = z.preprocess(
  (item) =>
    typeof item === 'object' && item !== null && !('type' in item) && 'role' in item
      ? { ...item, type: 'message' }
      : item,
  z.discriminatedUnion(
    'type',
    [message, functionCall, functionCallOutput, reasoning, compaction, compactionTrigger],
    {
      error:
        'must be a message, function_call, function_call_output, reasoning, compaction or compaction_trigger item (item_reference needs stored items: use previous_response_id)',
    },
  ),
);

const functionTool = z.strictObject({
  type: z.literal('function', {
    error:
      'only function tools are served: built-in tools (web_search, file_search, code_interpreter, computer use, tool_search, …), custom grammar tools and tool namespaces cannot run through this gateway (Codex CLI: web_search = "disabled" and [agents] enabled = false, docs/agents.md)',
  }),
  name: z.string(),
  description: nullish(z.string()),
  parameters: nullish(z.record(z.string(), z.unknown())),
  strict: nullish(z.boolean()),
});
const namedFunction = z.strictObject({ type: z.literal('function'), name: z.string() });
const toolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  namedFunction,
  z.strictObject({
    type: z.literal('allowed_tools'),
    mode: z.enum(['auto', 'required']),
    tools: z.array(namedFunction),
  }),
]);
const format = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  z.strictObject({
    type: z.literal('json_schema'),
    name: z.string(),
    schema: z.record(z.string(), z.unknown()),
    description: nullish(z.string()),
    strict: nullish(z.boolean()),
  }),
]);
const refused = (why: string) => z.never({ error: why }).optional();

export const responsesBodySchema = z.strictObject({
  model: z.string().min(1, { error: 'is required' }),
  input: z.union([text, z.array(inputItem)]),
  instructions: nullish(text),
  previous_response_id: nullish(z.string().max(200)),
  tools: nullish(z.array(functionTool)),
  tool_choice: nullish(toolChoice),
  parallel_tool_calls: nullish(z.boolean()),
  text: nullish(
    z.strictObject({
      format: nullish(format),
      verbosity: nullish(z.enum(['low', 'medium', 'high'])),
    }),
  ),
  reasoning: nullish(
    z.strictObject({
      effort: nullish(z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'])),
      summary: nullish(z.enum(['auto', 'concise', 'detailed'])),
      generate_summary: nullish(z.enum(['auto', 'concise', 'detailed'])),
    }),
  ),
  max_output_tokens: nullish(z.number().int().positive()),
  include: nullish(
    z.array(
      z.literal('reasoning.encrypted_content', {
        error: 'only reasoning.encrypted_content can be included',
      }),
    ),
  ),
  store: nullish(z.boolean()),
  /** Codex CLI's own session ids (not forwarded; named in `X-Tollgate-Dropped-Fields`). */
  client_metadata: nullish(z.record(z.string().max(64), z.string().max(4_096))),
  metadata: nullish(
    z
      .record(z.string().max(64), z.string().max(512))
      .refine((value) => Object.keys(value).length <= 16, { error: 'takes at most 16 pairs' }),
  ),
  stream: nullish(z.boolean()),
  stream_options: nullish(z.strictObject({ include_obfuscation: nullish(z.boolean()) })),
  temperature: nullish(z.number()),
  top_p: nullish(z.number()),
  user: nullish(z.string()),
  safety_identifier: nullish(z.string()),
  prompt_cache_key: nullish(z.string()),
  service_tier: nullish(z.string()),
  truncation: nullish(
    z.literal('disabled', {
      error: 'only disabled: the gateway never drops input to fit the context',
    }),
  ),
  background: nullish(z.literal(false, { error: 'background responses are not served' })),
  conversation: refused('conversations are not served: use previous_response_id'),
  prompt: refused('stored prompts are not served'),
  top_logprobs: refused('logprobs are not served on /v1/responses'),
  max_tool_calls: refused('is not served: the model decides how many tools it calls'),
});

export type ResponsesBody = z.output<typeof responsesBodySchema>;
export type ResponsesInputItem = z.output<typeof inputItem>;
export type ResponsesContentPart = z.output<typeof contentPart>;

/** Validates a `POST /v1/responses` body: 400 naming the first field that is wrong. */
export function parseResponsesBody(body: unknown): ResponsesBody {
  return parseInput(responsesBodySchema, body);
}

/** The body's input as items (a string input is one user message). */
export function inputItems(body: ResponsesBody): ResponsesInputItem[] {
  return typeof body.input === 'string'
    ? [{ type: 'message', role: 'user', content: body.input }]
    : body.input;
}
