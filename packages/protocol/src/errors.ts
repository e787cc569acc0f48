/**
 * The closed set of error codes Tollgate puts on the wire, and the one HTTP status each maps to.
 * A code without a status does not compile; `docs/errors.md` lists the same table and a test
 * fails when the two drift apart.
 */
export const errorStatus = {
  INVALID_INPUT: 400,
  INVALID_CHAT_SETTINGS: 400,
  INVALID_FUNCTION_TOOLS: 400,
  UNSUPPORTED_CAPABILITY: 400,
  UNAUTHENTICATED: 401,
  API_KEY_INVALID: 401,
  INVALID_API_KEY: 401,
  INSUFFICIENT_FUNDS: 402,
  PERMISSION_DENIED: 403,
  NATIVE_MODE_UNVERIFIED: 403,
  NOT_FOUND: 404,
  MODEL_NOT_FOUND: 404,
  TASK_NOT_FOUND: 404,
  CONVERSATION_PENDING: 409,
  CONVERSATION_KEY_MISMATCH: 409,
  IDEMPOTENCY_CONFLICT: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  PRICE_CHANGED: 409,
  SETTLEMENT_NOT_ALLOWED: 409,
  SETTLEMENT_EXPIRED: 409,
  ASSET_IN_USE: 409,
  KEY_NOT_ROTATABLE: 409,
  USAGE_REVIEW_NOT_ALLOWED: 409,
  SETTLEMENT_MISMATCH: 409,
  CONTENT_NOT_DELIVERED: 409,
  SHARE_DECISION_NOT_ALLOWED: 409,
  INPUT_DIGEST_MISMATCH: 409,
  QUOTE_MISMATCH: 409,
  REQUEST_TIMEOUT: 408,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RANGE_NOT_SATISFIABLE: 416,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  UPSTREAM_ERROR: 502,
  MODEL_UNAVAILABLE: 503,
  SERVICE_UNAVAILABLE: 503,
  UPSTREAM_TIMEOUT: 504,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof errorStatus;

export const errorCodes = Object.keys(errorStatus) as ErrorCode[];

/** The body of every error response: `{"error": {...}}`. */
export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    /** Our `X-Service-Request-Id`; never the upstream provider's id. */
    request_id: string;
    /** The field the error is about, as a dotted path (`input.2`, `documents`), when there is one. */
    param?: string;
  };
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(errorStatus, value);
}
