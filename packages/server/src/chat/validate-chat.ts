import type { Feature, ModelConfig } from '../config/schema.js';
import { ApiError, invalidInput } from '../errors/api-error.js';
import { checkInputBytes } from '../models/input-bytes.js';
import type { ChatRequest } from './chat-types.js';
import { checkSchemaLimits } from './schema-limits.js';
import { checkToolContinuation } from './tool-continuation.js';
import { scanMessages } from './validate-messages.js';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const settings = (param: string, message: string) =>
  new ApiError('INVALID_CHAT_SETTINGS', `${param}: ${message}`, param);

/** Fields forwarded upstream as they came, each checked here. */
const SAMPLING: Record<string, (value: unknown) => boolean> = {
  temperature: (value) => typeof value === 'number' && value >= 0 && value <= 2,
  top_p: (value) => typeof value === 'number' && value > 0 && value <= 1,
  presence_penalty: (value) => typeof value === 'number' && value >= -2 && value <= 2,
  frequency_penalty: (value) => typeof value === 'number' && value >= -2 && value <= 2,
  seed: (value) => Number.isSafeInteger(value),
  n: (value) => value === 1,
  stop: (value) =>
    typeof value === 'string' ||
    (Array.isArray(value) && value.length <= 4 && value.every((item) => typeof item === 'string')),
  user: (value) => typeof value === 'string' && value.length <= 256,
  parallel_tool_calls: (value) => typeof value === 'boolean',
};
const SAMPLING_RULES: Record<string, string> = {
  temperature: 'must be a number from 0 to 2',
  top_p: 'must be a number above 0 and at most 1',
  presence_penalty: 'must be a number from -2 to 2',
  frequency_penalty: 'must be a number from -2 to 2',
  seed: 'must be an integer',
  n: 'only 1 is supported (one choice per request, billed exactly)',
  stop: 'must be a string or up to 4 strings',
  user: 'must be a string of at most 256 characters',
  parallel_tool_calls: 'must be a boolean',
};
/** Fields the gateway rebuilds for the upstream (the rest pass through as validated). */
const REBUILT = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'max_tokens',
  'max_completion_tokens',
  'conversation_id',
]);
/** Every field this module reads itself (the sampling fields are checked from SAMPLING). */
const OWN = new Set([
  ...REBUILT,
  'tools',
  'tool_choice',
  'response_format',
  'reasoning_effort',
  'thinking',
]);

/** Validates a chat body against the spec and the model; returns what the gateway needs. */
export function validateChat(body: unknown, model: ModelConfig): ChatRequest {
  if (!isObject(body)) throw invalidInput('body', 'must be a JSON object');
  for (const key of Object.keys(body))
    if (!OWN.has(key) && !(key in SAMPLING)) throw invalidInput(key, 'is not a known field');
  for (const [key, check] of Object.entries(SAMPLING)) {
    if (body[key] !== undefined && !check(body[key]))
      throw settings(key, SAMPLING_RULES[key] ?? 'is invalid');
  }
  const scan = scanMessages(body['messages']);
  const messages = body['messages'] as Record<string, unknown>[];
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
  checkToolContinuation(messages);
  const responseFormat = body['response_format'];
  if (responseFormat !== undefined) {
    const structured = checkResponseFormat(responseFormat);
    if (structured) features.add('structured_output');
    textBytes += Buffer.byteLength(JSON.stringify(responseFormat));
  }
  if (checkThinking(body['reasoning_effort'], body['thinking'])) features.add('thinking');
  // The model's max_input_bytes counts all text it reads; images and videos have their own caps.
  checkInputBytes(model, textBytes, 'messages');

  const { maxOutputTokens, field } = checkMaxTokens(body, model);
  const conversationId = body['conversation_id'];
  if (
    conversationId !== undefined &&
    (typeof conversationId !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(conversationId))
  ) {
    throw invalidInput('conversation_id', 'must be 1-128 of A-Z a-z 0-9 _ -');
  }
  const passthrough: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!REBUILT.has(key)) passthrough[key] = value;
  }
  return {
    model: model.id,
    messages,
    stream,
    includeUsage,
    maxOutputTokens,
    maxTokensField: field,
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
  const name =
    isObject(choice) && choice['type'] === 'function' && isObject(choice['function'])
      ? choice['function']['name']
      : undefined;
  if (typeof name !== 'string')
    throw invalidInput(
      'tool_choice',
      'must be none, auto, required or {"type": "function", "function": {"name"}}',
    );
  const known =
    Array.isArray(tools) &&
    tools.some((tool) => (tool as { function?: { name?: unknown } }).function?.name === name);
  if (!known) throw settings('tool_choice', `names ${name}, which is not among tools`);
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
  if (
    effort !== undefined &&
    (typeof effort !== 'string' || !['minimal', 'low', 'medium', 'high'].includes(effort))
  )
    throw settings('reasoning_effort', 'must be minimal, low, medium or high');
  if (thinking === undefined) return effort !== undefined;
  if (!isObject(thinking) || (thinking['type'] !== 'enabled' && thinking['type'] !== 'disabled'))
    throw settings('thinking.type', 'must be enabled or disabled');
  const budget = thinking['budget_tokens'];
  if (budget !== undefined && (!Number.isSafeInteger(budget) || (budget as number) < 1))
    throw settings('thinking.budget_tokens', 'must be a positive integer');
  return thinking['type'] === 'enabled' || effort !== undefined;
}

function checkMaxTokens(
  body: Record<string, unknown>,
  model: ModelConfig,
): { maxOutputTokens: number; field: 'max_tokens' | 'max_completion_tokens' } {
  const legacy = body['max_tokens'];
  const current = body['max_completion_tokens'];
  if (legacy !== undefined && current !== undefined && legacy !== current)
    throw settings('max_completion_tokens', 'differs from max_tokens; send one of them');
  const value = current ?? legacy;
  const field = current !== undefined ? 'max_completion_tokens' : 'max_tokens';
  if (value === undefined) return { maxOutputTokens: model.max_output_tokens, field };
  if (!Number.isSafeInteger(value) || (value as number) < 1)
    throw settings(field, 'must be a positive integer');
  if ((value as number) > model.max_output_tokens)
    throw settings(field, `must be at most ${model.max_output_tokens} for ${model.id}`);
  return { maxOutputTokens: value as number, field };
}
