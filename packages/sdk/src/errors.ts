import { errorStatus, isErrorCode, type ErrorBody, type ErrorCode } from '@tollgate/protocol';

/** Every error this SDK throws extends this class. */
export class TollgateError extends Error {
  override readonly name: string = 'TollgateError';
}

/** What an answered error carries besides its class. */
export interface APIErrorFields {
  /** The HTTP status of the answer. */
  readonly status: number;
  /** `error.code` of the body; one of the spec's codes, or whatever a proxy sent (exact codes prevail). */
  readonly code: ErrorCode | (string & {});
  readonly message: string;
  /** Our `X-Service-Request-Id` (never the upstream provider's id); quote it in error reports. */
  readonly requestId: string | undefined;
  /** The field, header or query parameter at fault, when the body names one. */
  readonly param?: string | undefined;
  /** The `Idempotency-Key` of the business POST that got this answer, when it was one. */
  readonly idempotencyKey?: string | undefined;
  readonly headers?: Headers | undefined;
}

/**
 * The gateway answered with an error status (or sent an error event inside a stream). The
 * subclass names the spec's error family (spec section 7); `code` is the exact code.
 */
export class APIError extends TollgateError {
  override readonly name: string = 'APIError';
  readonly status: number;
  readonly code: ErrorCode | (string & {});
  readonly requestId: string | undefined;
  readonly param: string | undefined;
  readonly idempotencyKey: string | undefined;
  readonly headers: Headers | undefined;

  constructor(fields: APIErrorFields) {
    super(fields.message);
    this.status = fields.status;
    this.code = fields.code;
    this.requestId = fields.requestId;
    this.param = fields.param;
    this.idempotencyKey = fields.idempotencyKey;
    this.headers = fields.headers;
  }
}

/** 400 / 422: a field, parameter combination or tool message order is wrong, or a capability is not open. */
export class BadRequestError extends APIError {
  override readonly name = 'BadRequestError';
}
/** 401: the key is missing, malformed, unknown, disabled or expired. */
export class AuthenticationError extends APIError {
  override readonly name = 'AuthenticationError';
}
/** 402: not enough balance. Top up; then send again (nothing was recorded) or settle the original record. */
export class InsufficientFundsError extends APIError {
  override readonly name = 'InsufficientFundsError';
}
/** 403: no permission, or the capability combination is not open for the model. */
export class PermissionDeniedError extends APIError {
  override readonly name = 'PermissionDeniedError';
}
/** 404: no such model, task, record or resource for this key (another key's is the same 404). */
export class NotFoundError extends APIError {
  override readonly name = 'NotFoundError';
}
/** 408: the request did not reach the gateway in time; it did nothing. */
export class RequestTimeoutError extends APIError {
  override readonly name = 'RequestTimeoutError';
}
/** 409: idempotency conflict or in progress, price changed, settlement not allowed, … (see `code`). */
export class ConflictError extends APIError {
  override readonly name = 'ConflictError';
}
/** 413 / 415 / 431: the body or headers are too large, or the media type is not supported. */
export class ContentRejectedError extends APIError {
  override readonly name = 'ContentRejectedError';
}
/** 416: no requested byte range overlaps the content. */
export class RangeNotSatisfiableError extends APIError {
  override readonly name = 'RangeNotSatisfiableError';
}
/** 429: rate limited. Wait `retryAfter` seconds; read the original before resending an unknown request. */
export class RateLimitError extends APIError {
  override readonly name = 'RateLimitError';
  /** Seconds to wait, from `Retry-After`; `undefined` when the answer gave none. */
  readonly retryAfter: number | undefined;

  constructor(fields: APIErrorFields & { retryAfter: number | undefined }) {
    super(fields);
    this.retryAfter = fields.retryAfter;
  }
}
/** 5xx: a fault of the platform or the upstream whose outcome is known not to have happened. */
export class InternalServerError extends APIError {
  override readonly name = 'InternalServerError';
}

/**
 * A business POST whose outcome is not known: a timeout or a dropped connection after the
 * request may have been sent, a stream cut before its end, or an answer whose record says
 * `submission_unknown`. Nothing was resent. Read the original with
 * `client.requests.recover(error.idempotencyKey)`; never send it again with a new key.
 */
export class OutcomeUnknownError extends TollgateError {
  override readonly name = 'OutcomeUnknownError';
  readonly idempotencyKey: string;
  /** `X-Service-Request-Id`, when an answer (or a stream's headers) arrived. */
  readonly requestId: string | undefined;
  readonly method: string;
  readonly path: string;
  readonly reason: 'timeout' | 'connection' | 'stream_cut' | 'submission_unknown';

  constructor(fields: {
    idempotencyKey: string;
    requestId: string | undefined;
    method: string;
    path: string;
    reason: OutcomeUnknownError['reason'];
    cause: unknown;
  }) {
    super(
      `outcome of ${fields.method} ${fields.path} is unknown (${fields.reason}); ` +
        `read it with requests.recover('${fields.idempotencyKey}'), do not send it again`,
      { cause: fields.cause },
    );
    this.idempotencyKey = fields.idempotencyKey;
    this.requestId = fields.requestId;
    this.method = fields.method;
    this.path = fields.path;
    this.reason = fields.reason;
  }
}

/**
 * The caller's `AbortSignal` aborted the call. `outcomeUnknown` says whether a business POST
 * may have reached the gateway before it was aborted: then its journal entry is `unknown` and
 * `client.requests.recover(error.idempotencyKey)` reads what it did (never send it again with a
 * new key). Otherwise nothing was done: it was aborted before it was sent, or it was a read
 * or a wait between reads (`generate`, `recover`), and `idempotencyKey` is the key only when one
 * was journaled.
 */
export class AbortedError extends TollgateError {
  override readonly name = 'AbortedError';
  /** The `Idempotency-Key` of the aborted business POST, once it was journaled. */
  readonly idempotencyKey: string | undefined;
  /** `X-Service-Request-Id`, when the answer's headers had arrived (a stream, a JSON body). */
  readonly requestId: string | undefined;
  readonly outcomeUnknown: boolean;

  constructor(
    message: string,
    fields: {
      idempotencyKey: string | undefined;
      requestId: string | undefined;
      outcomeUnknown: boolean;
      cause: unknown;
    },
  ) {
    super(
      fields.outcomeUnknown && fields.idempotencyKey !== undefined
        ? `${message}; its outcome is unknown: read it with ` +
            `requests.recover('${fields.idempotencyKey}'), do not send it again`
        : message,
      { cause: fields.cause },
    );
    this.idempotencyKey = fields.idempotencyKey;
    this.requestId = fields.requestId;
    this.outcomeUnknown = fields.outcomeUnknown;
  }
}

/**
 * The request certainly never left this process or never reached the gateway (connection
 * refused, unknown host), or a read (GET, HEAD) failed in transit. Nothing was done by it.
 */
export class ConnectionError extends TollgateError {
  override readonly name = 'ConnectionError';
}

/** Builds the named error for an error answer; `body` is whatever the answer carried. */
export function errorFromAnswer(
  status: number,
  body: unknown,
  headers: Headers | undefined,
  idempotencyKey?: string,
): APIError {
  const error = isErrorBody(body) ? body.error : undefined;
  const fields: APIErrorFields = {
    status,
    code: error?.code ?? `HTTP_${status}`,
    message: error?.message ?? `HTTP ${status} without an error body`,
    requestId: error?.request_id ?? headers?.get('x-service-request-id') ?? undefined,
    param: error?.param,
    idempotencyKey,
    headers,
  };
  return errorOfStatus(fields, headers);
}

/**
 * Builds the named error for an error event inside a stream (`data: {"error": {...}}`): the
 * status is the one the spec's table gives its code.
 */
export function errorFromEvent(
  event: ErrorBody['error'],
  requestId: string | undefined,
  idempotencyKey: string,
): APIError {
  const status = isErrorCode(event.code) ? errorStatus[event.code] : 500;
  return errorOfStatus({
    status,
    code: event.code,
    message: event.message,
    requestId: event.request_id ?? requestId,
    param: event.param,
    idempotencyKey,
  });
}

function errorOfStatus(fields: APIErrorFields, headers?: Headers): APIError {
  const status = fields.status;
  if (status === 400 || status === 422) return new BadRequestError(fields);
  if (status === 401) return new AuthenticationError(fields);
  if (status === 402) return new InsufficientFundsError(fields);
  if (status === 403) return new PermissionDeniedError(fields);
  if (status === 404) return new NotFoundError(fields);
  if (status === 408) return new RequestTimeoutError(fields);
  if (status === 409) return new ConflictError(fields);
  if (status === 413 || status === 415 || status === 431) return new ContentRejectedError(fields);
  if (status === 416) return new RangeNotSatisfiableError(fields);
  if (status === 429)
    return new RateLimitError({ ...fields, retryAfter: parseRetryAfter(headers) });
  if (status >= 500) return new InternalServerError(fields);
  return new APIError(fields);
}

/** `Retry-After` as seconds: a number of seconds, or an HTTP date from now. */
function parseRetryAfter(headers: Headers | undefined): number | undefined {
  const value = headers?.get('retry-after');
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== 'object' || body === null) return false;
  const error = (body as { error?: unknown }).error;
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}
