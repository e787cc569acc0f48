import { ApiError } from '../../../errors/api-error.js';
import { BYTES_PER_TOKEN, estimatedTokens } from '../../../chat/token-estimate.js';
import { contextLengthReason } from '../../../providers/context-length.js';
import type { ChatOrigins, MessageOrigin } from './to-chat-body.js';

/**
 * The chat validator names chat fields (`stop`, `messages.4.content.1.image_url.url`); a
 * Messages caller sent other ones. Each error of the chat turn is renamed to the field the caller
 * sent (`stop_sequences`, `messages.2.content.0.source`), its message with it, so a rule lives
 * once (in the chat validator) and still reads in the caller's terms. A too-long input reads as
 * Anthropic words it, which Claude Code recognises to compact its context.
 */
export function inMessagesTerms(error: unknown, origins: ChatOrigins): unknown {
  if (!(error instanceof ApiError) || error.param === undefined) return error;
  const overflow = promptTooLong(error);
  if (overflow !== undefined) return overflow;
  const renamed = anthropicParam(error.param, origins);
  // Chat's messages are quoted in the text too (`messages.3: tool calls … before messages.5`).
  const quoted = (text: string) =>
    text.replace(/\bmessages\.\d+(?:\.[A-Za-z0-9_]+)*/g, (path) => anthropicParam(path, origins));
  const message = error.message.startsWith(error.param)
    ? `${renamed}${quoted(error.message.slice(error.param.length))}`
    : quoted(error.message);
  if (renamed === error.param && message === error.message) return error;
  return new ApiError(error.code, message, renamed, error.headers);
}

/** Chat's top-level fields with another name in the Messages body. */
const TOP_LEVEL: Readonly<Record<string, string>> = {
  stop: 'stop_sequences',
  user: 'metadata.user_id',
  max_completion_tokens: 'max_tokens',
  tool_choice: 'tool_choice',
  parallel_tool_calls: 'tool_choice.disable_parallel_tool_use',
  response_format: 'output_config.format',
};

export function anthropicParam(param: string, origins: ChatOrigins): string {
  const message = /^messages\.(\d+)(?:\.(.*))?$/.exec(param);
  if (message !== null) {
    const origin = origins.messages[Number(message[1])];
    return origin === undefined ? 'messages' : withinMessage(origin, message[2] ?? '');
  }
  const tool = /^tools\.(\d+)\.function\.(\w+)(.*)$/.exec(param);
  if (tool !== null) {
    const field = tool[2] === 'parameters' ? 'input_schema' : tool[2];
    return `tools.${tool[1]}.${field}${tool[3] ?? ''}`;
  }
  if (param === 'reasoning_effort' || param.startsWith('thinking'))
    return origins.effortFrom ?? 'thinking';
  if (param.startsWith('response_format.json_schema.schema'))
    return `output_config.format.schema${param.slice('response_format.json_schema.schema'.length)}`;
  const top = param.split('.')[0] ?? param;
  return TOP_LEVEL[top] ?? param;
}

/** `content.2.image_url.url` within one chat message, in the caller's terms. */
function withinMessage(origin: MessageOrigin, rest: string): string {
  if (rest === '') return origin.path;
  const part = /^content\.(\d+)(?:\.(.*))?$/.exec(rest);
  if (part !== null) {
    const block = origin.parts[Number(part[1])];
    if (block === undefined) return origin.contentPath;
    const field = part[2] ?? '';
    if (field.startsWith('image_url')) return `${block}.source`;
    return field === 'text' ? `${block}.text` : block;
  }
  if (rest === 'content') return origin.contentPath;
  const call = /^tool_calls\.(\d+)(?:\.(.*))?$/.exec(rest);
  if (call !== null) {
    const block = origin.toolCalls[Number(call[1])];
    if (block === undefined) return origin.path;
    const field = call[2] ?? '';
    if (field.startsWith('extra_content')) return origin.signatures?.[Number(call[1])] ?? block;
    if (field.includes('arguments')) return `${block}.input`;
    if (field.includes('name')) return `${block}.name`;
    return block;
  }
  if (rest === 'tool_call_id') return `${origin.path}.tool_use_id`;
  return origin.path;
}

/**
 * The chat rule for an input larger than the model reads (models/input-bytes.ts, the same rule
 * and wording for every family) in Anthropic's words: `prompt is too long: N tokens > M maximum`,
 * both figures in count_tokens' estimate (count-tokens.ts), so N > M exactly when the bytes
 * are over the model's `max_input_bytes`.
 */
function promptTooLong(error: ApiError): ApiError | undefined {
  if (error.code !== 'INVALID_INPUT' || error.param !== 'messages') return undefined;
  const sizes = /is larger than (\d+) bytes, the most .* accepts \((\d+) bytes of text\)/.exec(
    error.message,
  );
  if (sizes === null) return undefined;
  const maximum = Math.floor(Number(sizes[1]) / BYTES_PER_TOKEN);
  const tokens = estimatedTokens(Number(sizes[2]));
  return new ApiError(
    'INVALID_INPUT',
    `prompt is too long: ${tokens} tokens > ${maximum} maximum`,
    'messages',
    error.headers,
  );
}

/**
 * An upstream's context-length refusal (providers/context-length.ts) in Anthropic's words, as
 * the gateway's own size check is (`promptTooLong`): Claude Code compacts on an error whose
 * message holds `prompt is too long`. Anthropic adds `N tokens > M maximum`, which Claude Code
 * reads to know how much to drop; the gateway knows no model's context window (its
 * configuration has only `max_input_bytes`, which this input was within) and passes on nothing
 * of the provider's body, so it gives no such pair: the message says the input's size in the
 * count_tokens estimate, worded so that it never reads as one, and Claude Code compacts by its
 * own measure.
 */
export function upstreamPromptTooLong(
  model: string,
  estimatedInputTokens: number | undefined,
): ApiError {
  const size =
    estimatedInputTokens === undefined
      ? ''
      : `about ${estimatedInputTokens} tokens by the gateway's estimate; `;
  return new ApiError(
    'INVALID_INPUT',
    `prompt is too long: ${contextLengthReason(model)} (${size}the model's provider refused it before any output, nothing was charged); shorten it or ask for fewer output tokens`,
    'messages',
  );
}
