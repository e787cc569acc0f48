import { ApiError } from '../errors/api-error.js';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isShortString = (most: number) => (value: unknown) =>
  typeof value === 'string' && value.length >= 1 && value.length <= most;

/**
 * How the gateway treats each optional field of an OpenAI chat request that it does not rebuild
 * itself (docs/chat.md, "Request fields"). One record per field: its check and the rule shown
 * when the check fails (400 `INVALID_CHAT_SETTINGS` naming the field), and its handling:
 *
 * - `forward`: sent upstream as given (sampling, `user`, …).
 * - `configured`: sent upstream only when the model's `upstream_fields` lists it (the operator
 *   says the upstream supports it); else dropped, and named in the `X-Tollgate-Dropped-Fields`
 *   response header. For fields that do not change the answer: hints, storage and routing
 *   (`store`, `metadata`, `service_tier`, `prompt_cache_key`, `safety_identifier`, `verbosity`,
 *   `prediction`).
 * - `configured_or_refused`: like `configured`, but a value that would change the answer
 *   (`logprobs: true`, a `top_logprobs` count, a non-empty `logit_bias`) is refused rather than
 *   dropped when the upstream is not configured for it; the neutral value is dropped.
 */
export interface FieldRule {
  readonly handling: 'forward' | 'configured' | 'configured_or_refused';
  readonly check: (value: unknown) => boolean;
  readonly rule: string;
  /** `configured_or_refused`: the value that changes nothing (dropped without a word). */
  readonly neutral?: (value: unknown) => boolean;
}

export const REQUEST_FIELDS = {
  temperature: {
    handling: 'forward',
    check: (value) => typeof value === 'number' && value >= 0 && value <= 2,
    rule: 'must be a number from 0 to 2',
  },
  top_p: {
    handling: 'forward',
    check: (value) => typeof value === 'number' && value > 0 && value <= 1,
    rule: 'must be a number above 0 and at most 1',
  },
  presence_penalty: {
    handling: 'forward',
    check: (value) => typeof value === 'number' && value >= -2 && value <= 2,
    rule: 'must be a number from -2 to 2',
  },
  frequency_penalty: {
    handling: 'forward',
    check: (value) => typeof value === 'number' && value >= -2 && value <= 2,
    rule: 'must be a number from -2 to 2',
  },
  seed: { handling: 'forward', check: Number.isSafeInteger, rule: 'must be an integer' },
  n: {
    handling: 'forward',
    check: (value) => value === 1,
    rule: 'only 1 is supported (one choice per request, billed exactly)',
  },
  stop: {
    handling: 'forward',
    check: (value) =>
      typeof value === 'string' ||
      (Array.isArray(value) &&
        value.length <= 4 &&
        value.every((item) => typeof item === 'string')),
    rule: 'must be a string or up to 4 strings',
  },
  user: {
    handling: 'forward',
    check: (value) => typeof value === 'string' && value.length <= 256,
    rule: 'must be a string of at most 256 characters',
  },
  parallel_tool_calls: {
    handling: 'forward',
    check: (value) => typeof value === 'boolean',
    rule: 'must be a boolean',
  },
  store: {
    handling: 'configured',
    check: (value) => typeof value === 'boolean',
    rule: 'must be a boolean',
  },
  metadata: {
    handling: 'configured',
    check: (value) =>
      isObject(value) &&
      Object.keys(value).length <= 16 &&
      Object.entries(value).every(
        ([key, inner]) => key.length <= 64 && typeof inner === 'string' && inner.length <= 512,
      ),
    rule: 'must be at most 16 string pairs (keys up to 64, values up to 512 characters)',
  },
  service_tier: {
    handling: 'configured',
    check: (value) =>
      typeof value === 'string' && ['auto', 'default', 'flex', 'scale', 'priority'].includes(value),
    rule: 'must be auto, default, flex, scale or priority',
  },
  prompt_cache_key: {
    handling: 'configured',
    check: isShortString(1_024),
    rule: 'must be a string of 1 to 1024 characters',
  },
  safety_identifier: {
    handling: 'configured',
    check: isShortString(256),
    rule: 'must be a string of 1 to 256 characters',
  },
  verbosity: {
    handling: 'configured',
    check: (value) => value === 'low' || value === 'medium' || value === 'high',
    rule: 'must be low, medium or high',
  },
  prediction: {
    handling: 'configured',
    check: (value) =>
      isObject(value) &&
      value['type'] === 'content' &&
      (typeof value['content'] === 'string' || Array.isArray(value['content'])),
    rule: 'must be {"type": "content", "content": …}',
  },
  logprobs: {
    handling: 'configured_or_refused',
    check: (value) => typeof value === 'boolean',
    rule: 'must be a boolean',
    neutral: (value) => value === false,
  },
  top_logprobs: {
    handling: 'configured_or_refused',
    check: (value) =>
      Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= 20,
    rule: 'must be an integer from 0 to 20',
    neutral: (value) => value === 0,
  },
  logit_bias: {
    handling: 'configured_or_refused',
    check: (value) =>
      isObject(value) &&
      Object.keys(value).length <= 300 &&
      Object.entries(value).every(
        ([token, bias]) =>
          /^[0-9]{1,9}$/.test(token) && typeof bias === 'number' && bias >= -100 && bias <= 100,
      ),
    rule: 'must map at most 300 token ids to numbers from -100 to 100',
    neutral: (value) => isObject(value) && Object.keys(value).length === 0,
  },
} as const satisfies Record<string, FieldRule>;

export type RequestField = keyof typeof REQUEST_FIELDS;
/** The fields a model's `upstream_fields` may list. */
export const CONFIGURABLE_FIELDS = Object.entries(REQUEST_FIELDS)
  .filter(([, rule]) => rule.handling !== 'forward')
  .map(([field]) => field) as RequestField[];

/** The rules in their order, listed once rather than on every request. */
const FIELD_RULES = Object.entries(REQUEST_FIELDS) as readonly [RequestField, FieldRule][];

export function isRequestField(key: string): key is RequestField {
  return Object.hasOwn(REQUEST_FIELDS, key);
}

/**
 * Checks every optional field present and decides what goes upstream: returns the fields to
 * forward and the names of those dropped. Throws 400 for a value that breaks its rule, or a
 * value that would change the answer on an upstream not configured for it.
 */
export function sortRequestFields(
  body: Readonly<Record<string, unknown>>,
  // The model's configuration as far as this reads it (ModelConfig; a structural type, so the
  // configuration's schema, which lists CONFIGURABLE_FIELDS, does not come back here).
  model: { readonly id: string; readonly upstream_fields: readonly RequestField[] },
): { forward: Record<string, unknown>; dropped: string[] } {
  const forward: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [field, rule] of FIELD_RULES) {
    const value = body[field];
    if (value === undefined) continue;
    if (!rule.check(value))
      throw new ApiError('INVALID_CHAT_SETTINGS', `${field}: ${rule.rule}`, field);
    if (rule.handling === 'forward' || model.upstream_fields.includes(field)) {
      forward[field] = value;
      continue;
    }
    if (rule.handling === 'configured_or_refused' && rule.neutral?.(value) !== true)
      throw new ApiError(
        'UNSUPPORTED_CAPABILITY',
        `${field}: ${model.id} is not configured to pass ${field} to its upstream, and dropping it would change the answer; leave it out (docs/chat.md, "Request fields")`,
        field,
      );
    dropped.push(field);
  }
  if (
    body['top_logprobs'] !== undefined &&
    body['logprobs'] !== true &&
    forward['top_logprobs'] !== undefined
  )
    throw new ApiError(
      'INVALID_CHAT_SETTINGS',
      'top_logprobs: needs logprobs: true',
      'top_logprobs',
    );
  return { forward, dropped };
}
