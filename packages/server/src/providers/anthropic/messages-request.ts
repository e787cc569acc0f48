import type { ChatCallOptions } from '../chat-upstream.js';
import { toAnthropicMessages } from './messages-content.js';
import { refuseField } from './refusal.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The API version every request names (Anthropic requires the header). */
export const ANTHROPIC_VERSION = '2023-06-01';

/** Anthropic's smallest thinking budget: a cap at or below it leaves no room for thinking. */
export const MIN_THINKING_BUDGET = 1_024;

/**
 * Chat's `reasoning_effort` as an Anthropic thinking budget, before it is clamped below
 * `max_tokens`. `none` and `minimal` ask for no thinking.
 */
export const THINKING_BUDGETS: Readonly<Record<string, number | undefined>> = {
  none: undefined,
  minimal: undefined,
  low: 1_024,
  medium: 4_096,
  high: 16_384,
  xhigh: 32_768,
};

/** What one request says to the fields' rules. */
interface Translation {
  readonly chat: Json;
  readonly out: Json;
  readonly thinking: boolean;
}

/**
 * One rule per field the internal chat body may carry (chat/validate-chat.ts, request-fields.ts):
 * it writes the Anthropic field, or drops the field (each drop says why it is harmless), or
 * throws a refusal (refusal.ts) where leaving it out would change the answer. A field not listed
 * is refused too: nothing reaches an Anthropic upstream untranslated, or goes missing unnoticed.
 */
const FIELD_RULES: Readonly<Record<string, (value: unknown, request: Translation) => void>> = {
  // Rebuilt by `toMessagesRequest` itself (`stream` by the call: plain or streamed).
  model: () => undefined,
  stream: () => undefined,
  stream_options: () => undefined,
  messages: () => undefined,
  reasoning_effort: () => undefined,
  thinking: () => undefined,
  // The output cap sent is always the one held (`ChatCallOptions.maxOutputTokens`).
  max_tokens: () => undefined,
  max_completion_tokens: () => undefined,
  tools: () => undefined,
  parallel_tool_calls: () => undefined,
  tool_choice: () => undefined,
  stop: (value, { out }) => {
    out['stop_sequences'] = typeof value === 'string' ? [value] : value;
  },
  temperature: (value, { out, thinking }) => {
    if (typeof value !== 'number') return;
    if (value > 1) throw refuseField('temperature', 'must be at most 1: Anthropic takes 0 to 1');
    if (thinking && value !== 1)
      throw refuseField('temperature', 'may only be 1 (or left out) with thinking on');
    out['temperature'] = value;
  },
  top_p: (value, { out, thinking }) => {
    if (thinking && typeof value === 'number' && value < 0.95)
      throw refuseField('top_p', 'must be from 0.95 to 1 (or left out) with thinking on');
    out['top_p'] = value;
  },
  // An end-user id for abuse monitoring, either way: `metadata.user_id`.
  user: (value, { out }) => {
    out['metadata'] = { user_id: value };
  },
  safety_identifier: (value, { chat, out }) => {
    if (chat['user'] === undefined) out['metadata'] = { user_id: value };
  },
  response_format: (value, { out }) => {
    if (!isObject(value) || value['type'] === 'text') return;
    if (value['type'] !== 'json_schema' || !isObject(value['json_schema']))
      throw refuseField(
        'response_format.type',
        'json_object has no Anthropic equivalent; send a json_schema',
      );
    // `name`, `description` and `strict` have no place: the schema is the whole contract.
    out['output_config'] = {
      format: { type: 'json_schema', schema: value['json_schema']['schema'] },
    };
  },
  // Sampling penalties Anthropic does not have: 0 is their default; any other would be ignored.
  presence_penalty: (value) => refuseUnless(value === 0, 'presence_penalty'),
  frequency_penalty: (value) => refuseUnless(value === 0, 'frequency_penalty'),
  logprobs: (value) => refuseUnless(value === false, 'logprobs'),
  top_logprobs: (value) => refuseUnless(value === 0, 'top_logprobs'),
  logit_bias: (value) =>
    refuseUnless(isObject(value) && Object.keys(value).length === 0, 'logit_bias'),
  // Dropped, harmless: `n` is always 1 (request-fields.ts); a seed is a best-effort hint only;
  // a cache key, a service tier, storage, OpenAI's metadata pairs and a predicted output are
  // routing, capacity, storage and latency hints that do not change the answer; `verbosity` is
  // a style hint the prompt can carry.
  n: () => undefined,
  seed: () => undefined,
  prompt_cache_key: () => undefined,
  service_tier: () => undefined,
  store: () => undefined,
  metadata: () => undefined,
  prediction: () => undefined,
  verbosity: () => undefined,
};

function refuseUnless(neutral: boolean, field: string): void {
  if (!neutral)
    throw refuseField(
      field,
      'has no Anthropic equivalent, and leaving it out would change the answer',
    );
}

/**
 * The internal chat body (a validated chat-completions body with the channel's model) as an
 * Anthropic Messages request: its body and headers (docs/agents.md, "Anthropic upstreams").
 * Throws `UpstreamFailure` before anything is sent for what Anthropic cannot do as asked.
 */
export function toMessagesRequest(
  chat: Json,
  options: ChatCallOptions,
  stream: boolean,
): { body: Json; headers: Record<string, string> } {
  const maxTokens = options.maxOutputTokens;
  const thinking = thinkingOf(chat, maxTokens);
  const { system, messages } = toAnthropicMessages(
    Array.isArray(chat['messages']) ? (chat['messages'] as Json[]) : [],
    options.opaque,
  );
  const out: Json = {
    model: chat['model'],
    max_tokens: maxTokens,
    ...(system.length === 0 ? {} : { system }),
    messages,
    ...(thinking === undefined ? {} : { thinking }),
    ...toolsOf(chat, thinking !== undefined),
    ...(stream ? { stream: true } : {}),
  };
  const request = { chat, out, thinking: thinking !== undefined };
  for (const [field, value] of Object.entries(chat)) {
    if (value === undefined) continue;
    const rule = FIELD_RULES[field];
    if (rule === undefined) throw refuseField(field, 'is not translated for an Anthropic upstream');
    rule(value, request);
  }
  const beta = options.anthropicBeta;
  return {
    body: out,
    headers: {
      'anthropic-version': ANTHROPIC_VERSION,
      ...(beta === undefined || beta === '' ? {} : { 'anthropic-beta': beta }),
    },
  };
}

/**
 * The thinking asked: chat's `thinking` (`disabled` wins; `enabled` with its budget) or else
 * `reasoning_effort` by `THINKING_BUDGETS` (`enabled` without a budget reads as `medium`). The
 * budget is at least 1,024 and below `max_tokens`, as Anthropic requires; with `max_tokens` at
 * or below 1,024 there is no room, and the answer is made without thinking.
 */
function thinkingOf(
  chat: Json,
  maxTokens: number,
): { type: 'enabled'; budget_tokens: number } | undefined {
  const asked = isObject(chat['thinking']) ? chat['thinking'] : undefined;
  if (asked?.['type'] === 'disabled') return undefined;
  const effort =
    typeof chat['reasoning_effort'] === 'string' ? chat['reasoning_effort'] : undefined;
  const budget =
    typeof asked?.['budget_tokens'] === 'number'
      ? asked['budget_tokens']
      : effort !== undefined
        ? THINKING_BUDGETS[effort]
        : asked?.['type'] === 'enabled'
          ? THINKING_BUDGETS['medium']
          : undefined;
  if (budget === undefined || maxTokens <= MIN_THINKING_BUDGET) return undefined;
  return {
    type: 'enabled',
    budget_tokens: Math.min(Math.max(budget, MIN_THINKING_BUDGET), maxTokens - 1),
  };
}

/**
 * `tools` and `tool_choice`: function tools as custom tools (`strict` has no place), the choice
 * in Anthropic's words; `allowed_tools` offers only the tools it allows; `parallel_tool_calls:
 * false` is `disable_parallel_tool_use`. Anthropic refuses a forced tool with thinking on.
 */
function toolsOf(chat: Json, thinking: boolean): Json {
  const tools = Array.isArray(chat['tools']) ? (chat['tools'] as Json[]) : undefined;
  if (tools === undefined) return {};
  const choice = chat['tool_choice'];
  let allowed: Set<unknown> | undefined;
  let type: 'auto' | 'any' | 'none' | 'tool' = 'auto';
  let name: unknown;
  if (choice === 'required') type = 'any';
  else if (choice === 'none') type = 'none';
  else if (
    isObject(choice) &&
    choice['type'] === 'allowed_tools' &&
    isObject(choice['allowed_tools'])
  ) {
    const list = choice['allowed_tools']['tools'];
    allowed = new Set(Array.isArray(list) ? list.map((entry) => functionName(entry)) : []);
    if (choice['allowed_tools']['mode'] === 'required') type = 'any';
  } else if (isObject(choice) && choice['type'] === 'function') {
    type = 'tool';
    name = functionName(choice);
  }
  if (thinking && (type === 'any' || type === 'tool'))
    throw refuseField(
      'tool_choice',
      'may not force a tool call with thinking on (Anthropic refuses it)',
    );
  const offered = tools
    .filter((tool) => allowed === undefined || allowed.has(functionName(tool)))
    .map((tool) => {
      const fn = isObject(tool['function']) ? tool['function'] : {};
      return {
        name: fn['name'],
        ...(typeof fn['description'] === 'string' ? { description: fn['description'] } : {}),
        input_schema: isObject(fn['parameters'])
          ? fn['parameters']
          : { type: 'object', properties: {} },
      };
    });
  const serial = chat['parallel_tool_calls'] === false && type !== 'none';
  return {
    tools: offered,
    tool_choice: {
      type,
      ...(type === 'tool' ? { name } : {}),
      ...(serial ? { disable_parallel_tool_use: true } : {}),
    },
  };
}

function functionName(entry: unknown): unknown {
  return isObject(entry) && isObject(entry['function']) ? entry['function']['name'] : undefined;
}
