import {
  errorStatus,
  type AnthropicErrorBody,
  type AnthropicErrorType,
  type AnthropicStreamError,
  type ErrorBody,
} from '@tollgate/protocol';
import type { onSendHookHandler } from 'fastify';

/**
 * Anthropic's error shape on the Messages routes: `{"type": "error", "error": {"type",
 * "message"}, "request_id"}`, Anthropic's error type chosen by the status, which stays the
 * spec's (a money refusal is 402/403, never a 5xx or 429). One table, as `errorStatus` is.
 */
const TYPE_BY_STATUS: Readonly<Record<number, AnthropicErrorType>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  // Anthropic has no 409: an idempotency or price conflict is a request that conflicts with an
  // earlier one (docs/anthropic-messages.md, "Errors").
  409: 'invalid_request_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  431: 'request_too_large',
  500: 'api_error',
  502: 'api_error',
  503: 'overloaded_error',
  504: 'timeout_error',
};

export function anthropicErrorType(status: number): AnthropicErrorType {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

function isSpecErrorBody(value: unknown): value is ErrorBody {
  const error = (value as { error?: unknown } | null)?.error;
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}

/**
 * Errors the Anthropic SDK may send again by itself (it retries 408, 409, 429 and 5xx unless the
 * answer says `x-should-retry`): only those where nothing was done. Every other error answer
 * says `x-should-retry: false`, as the spec asks of callers (no automatic resend): a resent
 * request after an unknown outcome could be charged twice, and for a key with optional
 * idempotency a resend is a new request.
 */
const RETRYABLE_CODES: ReadonlySet<string> = new Set(['RATE_LIMITED', 'MODEL_UNAVAILABLE']);

/**
 * The `onSend` hook of the Messages routes: every error answer (validation, authentication,
 * rate limits, money refusals, upstream errors, idempotency conflicts, replays of recorded
 * errors) leaves in Anthropic's shape, whichever code path made it in the spec's.
 */
export const anthropicErrorAnswers: onSendHookHandler = (request, reply, payload, done) => {
  if (reply.statusCode < 400) {
    done(null, payload);
    return;
  }
  const text =
    typeof payload === 'string'
      ? payload
      : Buffer.isBuffer(payload)
        ? payload.toString()
        : undefined;
  let parsed: unknown;
  try {
    parsed = text === undefined ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!isSpecErrorBody(parsed)) {
    done(null, payload);
    return;
  }
  if (!RETRYABLE_CODES.has(parsed.error.code)) void reply.header('x-should-retry', 'false');
  const body: AnthropicErrorBody = {
    type: 'error',
    error: { type: anthropicErrorType(reply.statusCode), message: parsed.error.message },
    request_id: parsed.error.request_id || request.id,
  };
  done(null, JSON.stringify(body));
};

/**
 * The `data` of `event: error` for an error body of the spec's shape (a stream that fails after
 * it began, or awaits funds), its type by the status its code has.
 */
export function anthropicStreamError(errorBody: unknown): AnthropicStreamError {
  if (!isSpecErrorBody(errorBody))
    return { type: 'error', error: { type: 'api_error', message: 'the stream ended in an error' } };
  return {
    type: 'error',
    error: {
      type: anthropicErrorType(statusOf(errorBody.error.code)),
      message: errorBody.error.message,
    },
  };
}

function statusOf(code: ErrorBody['error']['code']): number {
  return errorStatus[code];
}
