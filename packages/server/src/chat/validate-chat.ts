import type { Feature, ModelConfig } from '../config/schema.js';
import { ApiError, invalidInput } from '../errors/api-error.js';
import { checkInputBytes } from '../models/input-bytes.js';
import type { ChatRequest } from './chat-types.js';
import { checkSchemaLimits } from './schema-limits.js';
import { checkToolContinuation } from './tool-continuation.js';
import { clientOnlyMessageFields } from './client-only-fields.js';
import { isRequestField, sortRequestFields } from '../config/request-fields.js';
import { scanMessages } from './validate-messages.js';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const settings = (param: string, message: string) =>
  new ApiError('INVALID_CHAT_SETTINGS', `${param}: ${message}`, param);

/** Fields the gateway rebuilds for the upstream (the rest pass through as validated). */
export const REBUILT = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'max_tokens',
  'max_completion_tokens',
  'conversation_id',
]);
/** Fields this module checks and forwards itself. */
export const FORWARDED = [
  'tools',
  'tool_choice',
  'response_format',
  'reasoning_effort',
  'thinking',
];
/** OpenAI fields with a rule of their own (docs/chat.md, "Request fields"). */
export const SPECIAL = new Set(['modalities', 'functions', 'function_call']);
/** Every field this module reads itself (the optional OpenAI fields are request-fields.ts's). */
const OWN = new Set([...REBUILT, ...FORWARDED, ...SPECIAL]);
const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'];

/** Validates a chat body against the spec and the model; returns what the gateway needs. */
export function validateChat(body: unknown, model: ModelConfig): ChatRequest {
  if (!isObject(body)) throw invalidInput('body', 'must be a JSON object');
  for (const key of Object.keys(body))
    if (!OWN.has(key) && !isRequestField(key)) throw invalidInput(key, 'is not a known field');
  const fields = sortRequestFields(body, model);
  const dropped = [...fields.dropped, ...checkSpecialFields(body)];
  const scan = scanMessages(body['messages']);
  const messages = body['messages'] as Record<string, unknown>[];
  const clientOnly = clientOnlyMessageFields(messages);
  const features = new Set<Feature>();
  if (scan.images.length > 0) features.add('image_input');
  if (scan.videoCount > 0) features.add('video_input');

  const stream = body['stream'] ?? false;
  if (typeof stream !== 'boolean') throw invalidInput('stream', 'must be a boolean');
  if (stream) features.add('streaming');
  const streamOptions = body['stream_options'];
  let includeUsage = false;
  if (streamOptions !== undefined) {
    if (!stream) throw settings('stream_options', 'is only allowed with stream: true');
    if (
      !isObject(streamOptions) ||
      Object.keys(streamOptions).some((key) => key !== 'include_usage') ||
      (streamOptions['include_usage'] !== undefined &&
        typeof streamOptions['include_usage'] !== 'boolean')
    ) {
      throw settings('stream_options', 'takes only include_usage (boolean)');
    }
    includeUsage = streamOptions['include_usage'] === true;
  }

  let textBytes = scan.textBytes;
  const tools = body['tools'];
  if (tools !== undefined) {
    textBytes += checkTools(tools);
    features.add('tools');
  }
  checkToolChoice(body['tool_choice'], tools);
  checkToolContinuation(clientOnly.messages);
  const responseFormat = body['response_format'];
  if (responseFormat !== undefined) {
    const structured = checkResponseFormat(responseFormat);
    if (structured) features.add('structured_output');
    textBytes += Buffer.byteLength(JSON.stringify(responseFormat));
  }
  if (checkThinking(body['reasoning_effort'], body['thinking'])) features.add('thinking');
  // The model's max_input_bytes counts all text it reads; images and videos have their own caps.
  checkInputBytes(model, textBytes, 'messages');

  const { maxOutputTokens, upstreamTokenLimit } = checkMaxTokens(body, model);
  const conversationId = body['conversation_id'];
  if (
    conversationId !== undefined &&
    (typeof conversationId !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(conversationId))
  ) {
    throw invalidInput('conversation_id', 'must be 1-128 of A-Z a-z 0-9 _ -');
  }
  const passthrough: Record<string, unknown> = { ...fields.forward };
  for (const key of FORWARDED) if (body[key] !== undefined) passthrough[key] = body[key];
  return {
    model: model.id,
    messages: clientOnly.messages,
    dropped: [...dropped, ...clientOnly.dropped],
    stream,
    includeUsage,
    maxOutputTokens,
    upstreamTokenLimit,
    conversationId,
    passthrough,
    features,
    images: scan.images,
    videoCount: scan.videoCount,
    textBytes,
  };
}

function checkTools(tools: unknown): number {
  if (!Array.isArray(tools) || tools.length === 0 || tools.length > 128)
    throw invalidInput('tools', 'must be an array of 1 to 128 tools');
  const names = new Set<string>();
  tools.forEach((tool: unknown, index) => {
    const at = `tools.${index}`;
    if (!isObject(tool) || tool['type'] !== 'function')
      throw invalidInput(`${at}.type`, 'must be function');
    const fn = tool['function'];
    if (
      !isObject(fn) ||
      typeof fn['name'] !== 'string' ||
      !/^[A-Za-z0-9_-]{1,64}$/.test(fn['name'])
    )
      throw invalidInput(`${at}.function.name`, 'must be 1-64 of A-Z a-z 0-9 _ -');
    if (names.has(fn['name'])) throw invalidInput(`${at}.function.name`, 'is used by another tool');
    names.add(fn['name']);
    if (fn['description'] !== undefined && typeof fn['description'] !== 'string')
      throw invalidInput(`${at}.function.description`, 'must be a string');
    if (fn['parameters'] !== undefined) {
      if (!isObject(fn['parameters']))
        throw invalidInput(`${at}.function.parameters`, 'must be a JSON Schema object');
      checkSchemaLimits(fn['parameters'], `${at}.function.parameters`);
    }
    if (fn['strict'] !== undefined && typeof fn['strict'] !== 'boolean')
      throw invalidInput(`${at}.function.strict`, 'must be a boolean');
  });
  return Buffer.byteLength(JSON.stringify(tools));
}

function checkToolChoice(choice: unknown, tools: unknown): void {
  if (choice === undefined) return;
  if (choice === 'none' || choice === 'auto' || choice === 'required') {
    if (choice === 'required' && tools === undefined)
      throw settings('tool_choice', 'required needs tools');
    return;
  }
  if (isObject(choice) && choice['type'] === 'allowed_tools') {
    checkAllowedTools(choice['allowed_tools'], tools);
    return;
  }
  const name =
    isObject(choice) && choice['type'] === 'function' && isObject(choice['function'])
      ? choice['function']['name']
      : undefined;
  if (typeof name !== 'string')
    throw invalidInput(
      'tool_choice',
      'must be none, auto, required, {"type": "function", "function": {"name"}} or {"type": "allowed_tools", …}',
    );
  checkToolNamed(name, tools, 'tool_choice');
}

function checkToolNamed(name: string, tools: unknown, param: string): void {
  const known =
    Array.isArray(tools) &&
    tools.some((tool) => (tool as { function?: { name?: unknown } }).function?.name === name);
  if (!known) throw settings(param, `names ${name}, which is not among tools`);
}

/** OpenAI's `{"type":"allowed_tools","allowed_tools":{"mode","tools":[{"type":"function","function":{"name"}}]}}`. */
function checkAllowedTools(allowed: unknown, tools: unknown): void {
  const param = 'tool_choice.allowed_tools';
  if (!isObject(allowed) || (allowed['mode'] !== 'auto' && allowed['mode'] !== 'required'))
    throw invalidInput(`${param}.mode`, 'must be auto or required');
  const list = allowed['tools'];
  if (!Array.isArray(list) || list.length === 0 || list.length > 128)
    throw invalidInput(`${param}.tools`, 'must list 1 to 128 tools');
  list.forEach((entry: unknown, index) => {
    const name =
      isObject(entry) && entry['type'] === 'function' && isObject(entry['function'])
        ? entry['function']['name']
        : undefined;
    if (typeof name !== 'string')
      throw invalidInput(
        `${param}.tools.${index}`,
        'must be {"type": "function", "function": {"name"}}',
      );
    checkToolNamed(name, tools, `${param}.tools.${index}`);
  });
}

/**
 * `modalities` (only text is made: `["text"]` is dropped, audio refused) and OpenAI's legacy
 * `functions` / `function_call` (refused: they answer in another shape). Returns what was dropped.
 */
function checkSpecialFields(body: Record<string, unknown>): string[] {
  for (const legacy of ['functions', 'function_call'])
    if (body[legacy] !== undefined)
      throw invalidInput(
        legacy,
        `is OpenAI's legacy function calling: send tools and tool_choice instead (docs/chat.md, "Request fields")`,
      );
  const modalities = body['modalities'];
  if (modalities === undefined) return [];
  if (!Array.isArray(modalities) || !modalities.every((item) => typeof item === 'string'))
    throw invalidInput('modalities', 'must be an array of strings');
  if (modalities.some((item) => item !== 'text'))
    throw new ApiError(
      'UNSUPPORTED_CAPABILITY',
      'modalities: only text output is offered; leave modalities out or send ["text"]',
      'modalities',
    );
  return ['modalities'];
}

/** True for structured output (json_object, json_schema). */
function checkResponseFormat(format: unknown): boolean {
  if (!isObject(format)) throw invalidInput('response_format', 'must be an object');
  if (format['type'] === 'text') return false;
  if (format['type'] === 'json_object') return true;
  if (format['type'] !== 'json_schema')
    throw invalidInput('response_format.type', 'must be text, json_object or json_schema');
  const schema = format['json_schema'];
  if (
    !isObject(schema) ||
    typeof schema['name'] !== 'string' ||
    !/^[A-Za-z0-9_-]{1,64}$/.test(schema['name'])
  ) {
    throw invalidInput('response_format.json_schema.name', 'must be 1-64 of A-Z a-z 0-9 _ -');
  }
  if (!isObject(schema['schema']))
    throw invalidInput('response_format.json_schema.schema', 'must be a JSON Schema object');
  checkSchemaLimits(schema['schema'], 'response_format.json_schema.schema');
  return true;
}

/** True when the request asks for thinking. */
function checkThinking(effort: unknown, thinking: unknown): boolean {
  if (effort !== undefined && (typeof effort !== 'string' || !REASONING_EFFORTS.includes(effort)))
    throw settings('reasoning_effort', `must be ${REASONING_EFFORTS.join(', ')}`);
  // `none` asks for no reasoning: it needs no thinking combination.
  const asksEffort = effort !== undefined && effort !== 'none';
  if (thinking === undefined) return asksEffort;
  if (!isObject(thinking) || (thinking['type'] !== 'enabled' && thinking['type'] !== 'disabled'))
    throw settings('thinking.type', 'must be enabled or disabled');
  const budget = thinking['budget_tokens'];
  if (budget !== undefined && (!Number.isSafeInteger(budget) || (budget as number) < 1))
    throw settings('thinking.budget_tokens', 'must be a positive integer');
  return thinking['type'] === 'enabled' || asksEffort;
}

/**
 * The output cap held (the caller's, else the model's `max_output_tokens`) and the limit sent
 * upstream. The caller's `max_tokens` or `max_completion_tokens` goes under the field the model's
 * upstream accepts (`token_limit_field`: OpenAI's reasoning models refuse `max_tokens`); with
 * none from the caller nothing is invented, unless the model says its upstream needs a limit
 * (`token_limit_required`), and then the held cap is sent (docs/chat.md, "Output cap").
 */
function checkMaxTokens(
  body: Record<string, unknown>,
  model: ModelConfig,
): { maxOutputTokens: number; upstreamTokenLimit: Readonly<Record<string, number>> } {
  const legacy = body['max_tokens'];
  const current = body['max_completion_tokens'];
  if (legacy !== undefined && current !== undefined && legacy !== current)
    throw settings('max_completion_tokens', 'differs from max_tokens; send one of them');
  const value = current ?? legacy;
  const field = current !== undefined ? 'max_completion_tokens' : 'max_tokens';
  if (value === undefined)
    return {
      maxOutputTokens: model.max_output_tokens,
      upstreamTokenLimit: model.token_limit_required
        ? { [model.token_limit_field]: model.max_output_tokens }
        : {},
    };
  if (!Number.isSafeInteger(value) || (value as number) < 1)
    throw settings(field, 'must be a positive integer');
  if ((value as number) > model.max_output_tokens)
    throw settings(field, `must be at most ${model.max_output_tokens} for ${model.id}`);
  return {
    maxOutputTokens: value as number,
    upstreamTokenLimit: { [model.token_limit_field]: value as number },
  };
}
