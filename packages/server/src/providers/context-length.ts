import type { ProviderDialectName } from '../config/schema.js';
import { invalidInput } from '../errors/api-error.js';
import type { RefusalReader } from './upstream-error.js';

/**
 * How each provider says "the input does not fit the model's context window" (docs/providers.md,
 * "Errors and context length"): the one place these rules live, as data. Each OpenAI-compatible
 * `dialect` has its own; Anthropic's Messages upstreams (`chat_api: messages`) and OpenAI's
 * Responses upstreams (`chat_api: responses`) have theirs. The recorded bodies are in
 * test/providers/fixtures/provider-dialect-outcomes.json.
 *
 * A rule only classifies: the provider's body is read to a bound (`ERROR_BODY_BYTES`), its error
 * object's `code`, `type` and the start of its `message` compared with the rule, and nothing of
 * it goes further — the caller gets our own message (`contextLengthError`).
 */
export interface ContextLengthRule {
  /** The statuses the provider answers it with. */
  readonly statuses: readonly number[];
  /** Error `code`s that say it (compared as strings: GLM's business codes are numbers-as-text). */
  readonly codes?: readonly string[];
  /** Phrases of the error's `message` that say it (case-insensitive). */
  readonly phrases?: readonly RegExp[];
  /** When set, the error's `type` must be one of these as well (with a code or a phrase). */
  readonly types?: readonly string[];
  /** Where the rule was read. */
  readonly source: string;
}

/** The error dialects: the OpenAI-compatible ones by `dialect`, and the two other chat protocols. */
export type ContextLengthDialect = ProviderDialectName | 'anthropic_messages' | 'openai_responses';

/** OpenAI's own wording, copied by the servers of its dialect (vLLM, DeepSeek). */
const MAXIMUM_CONTEXT_LENGTH = /maximum context length/i;

export const CONTEXT_LENGTH_RULES: Readonly<Record<ContextLengthDialect, ContextLengthRule>> = {
  openai: {
    statuses: [400],
    codes: ['context_length_exceeded'],
    // vLLM and other servers of OpenAI's dialect send the message without the code.
    phrases: [MAXIMUM_CONTEXT_LENGTH],
    source:
      'platform.openai.com/docs/guides/error-codes: 400 invalid_request_error, code context_length_exceeded',
  },
  deepseek: {
    statuses: [400],
    // Its code is the generic `invalid_request_error`: only the message tells.
    phrases: [MAXIMUM_CONTEXT_LENGTH],
    source:
      "api-docs.deepseek.com/quick_start/error_codes: 400, This model's maximum context length",
  },
  qwen: {
    statuses: [400],
    // Not "Range of max_tokens" or other ranges: only the input's.
    phrases: [/range of input length/i],
    source:
      'alibabacloud.com/help/en/model-studio/error-code: 400 InvalidParameter, Range of input length should be [1, N]',
  },
  glm: {
    statuses: [400],
    codes: ['1261'],
    source: 'docs.bigmodel.cn/cn/api/api-code: business code 1261, Prompt 超长',
  },
  kimi: {
    statuses: [400],
    phrases: [/exceeded model token limit/i],
    source:
      'platform.kimi.ai/docs/api/errors: 400 invalid_request_error, Your request exceeded model token limit',
  },
  gemini: {
    statuses: [400],
    phrases: [/input token count.*exceeds the maximum/i],
    source:
      'ai.google.dev/gemini-api/docs/troubleshooting: 400 INVALID_ARGUMENT, The input token count (N) exceeds the maximum number of tokens allowed (M)',
  },
  anthropic_messages: {
    statuses: [400],
    types: ['invalid_request_error'],
    phrases: [/^prompt is too long/i],
    source:
      'docs.anthropic.com/en/api/errors: 400 invalid_request_error, prompt is too long: N tokens > M maximum',
  },
  openai_responses: {
    statuses: [400],
    codes: ['context_length_exceeded'],
    source:
      'platform.openai.com/docs/guides/error-codes: the Responses API answers 400 with code context_length_exceeded',
  },
};

/** How much of a provider's error body is read: more is never needed to classify it. */
export const ERROR_BODY_BYTES = 16 * 1024;
/** How much of its message is compared. */
const MESSAGE_CHARACTERS = 1_000;

/** The error object of a body (Gemini's OpenAI compatibility sends it in a one-item list). */
function errorObject(body: unknown): Record<string, unknown> | undefined {
  const outer = Array.isArray(body) ? (body[0] as unknown) : body;
  if (typeof outer !== 'object' || outer === null) return undefined;
  const error = (outer as { error?: unknown }).error;
  return typeof error === 'object' && error !== null && !Array.isArray(error)
    ? (error as Record<string, unknown>)
    : undefined;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;

/** Whether an error answer (its status and parsed body) is the provider's context-length refusal. */
export function isContextLengthError(
  rule: ContextLengthRule,
  status: number,
  body: unknown,
): boolean {
  if (!rule.statuses.includes(status)) return false;
  const error = errorObject(body);
  if (error === undefined) return false;
  const type = text(error['type']);
  if (rule.types !== undefined && (type === undefined || !rule.types.includes(type))) return false;
  const code = text(error['code']);
  if (code !== undefined && rule.codes?.includes(code) === true) return true;
  const message = text(error['message'])?.slice(0, MESSAGE_CHARACTERS);
  return message !== undefined && (rule.phrases ?? []).some((phrase) => phrase.test(message));
}

/** The model named in the caller's error: its id, or "the model's" when the adapter has none. */
const whose = (model: string | undefined) => (model === undefined ? "the model's" : `${model}'s`);

/**
 * What every context-length error says of a chat input, whatever field or protocol names it:
 * `/v1/messages` says it in Anthropic's words around it (http/dialects/messages/chat-error-paths.ts).
 */
export function contextLengthReason(model: string | undefined): string {
  return `the input is longer than ${whose(model)} context window allows`;
}

/**
 * The caller's error for an input its model's provider refused as too long: 400 `INVALID_INPUT`
 * naming `messages` (the route renames it where the caller's protocol calls it otherwise:
 * `input` in the Responses API), in our words.
 */
export function contextLengthError(model: string | undefined) {
  return invalidInput(
    'messages',
    `${contextLengthReason(model)} (the model's provider refused it before any output; nothing was charged); shorten it or ask for fewer output tokens`,
  );
}

/**
 * The same for an embeddings input (`POST /v1/embeddings`): 400 `INVALID_INPUT` naming `input`.
 * The provider does not say which of several inputs is too long, and no output is asked for.
 */
export function embeddingsContextLengthError(model: string | undefined) {
  return invalidInput(
    'input',
    `an input is longer than ${whose(model)} context window allows (the model's provider refused it before any embedding; nothing was charged); shorten or split the longest`,
  );
}

/**
 * What an adapter hands its upstream client: an error answer its provider gave as a
 * context-length refusal becomes the caller's 400 (`contextLengthError`, or
 * `embeddingsContextLengthError` for the embeddings adapter); any other stays the upstream
 * failure it was.
 */
export function contextLengthReader(
  dialect: ContextLengthDialect,
  model: string | undefined,
  family: 'chat' | 'embeddings' = 'chat',
): RefusalReader {
  const rule = CONTEXT_LENGTH_RULES[dialect];
  const error = family === 'chat' ? contextLengthError : embeddingsContextLengthError;
  return (status, body) =>
    isContextLengthError(rule, status, body)
      ? { apiError: error(model), refusal: 'context_length' }
      : undefined;
}
