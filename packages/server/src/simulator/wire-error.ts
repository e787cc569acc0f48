import type { ServerResponse } from 'node:http';
import { send } from './http-io.js';

/**
 * A request refused the way the upstream being imitated refuses it: a status (400 unless
 * said), and for OpenAI's shape the `param` and `code` of its error object.
 */
export class WireError extends Error {
  override readonly name = 'WireError';
  readonly status: number;
  readonly param: string | null;
  readonly code: string | null;

  constructor(
    message: string,
    options: { status?: number; param?: string | null; code?: string | null } = {},
  ) {
    super(message);
    this.status = options.status ?? 400;
    this.param = options.param ?? null;
    this.code = options.code ?? null;
  }
}

/** How one family of routes writes its errors on the wire. */
export interface ErrorDialect {
  /** A refused request (body, headers, opaque state). */
  refuse(response: ServerResponse, error: WireError): void;
  /** `[sim:fail=STATUS]`. */
  fail(response: ServerResponse, status: number): void;
}

const openAiType = (status: number) => (status < 500 ? 'invalid_request_error' : 'server_error');

/**
 * The chat route's shape since it was written: `{"error": {"message", "type"}}`, with `param`
 * and `code` only when the refusal has them (the simulator's own checks name neither).
 */
export const CHAT_ERRORS: ErrorDialect = {
  refuse: (response, error) =>
    send(response, error.status, {
      error: {
        message: error.message,
        type: openAiType(error.status),
        ...(error.param === null ? {} : { param: error.param }),
        ...(error.code === null ? {} : { code: error.code }),
      },
    }),
  fail: (response, status) =>
    send(response, status, {
      error: { message: `simulated failure ${status}`, type: 'simulated_error' },
    }),
};

/** OpenAI's full error object, as the Responses API sends it: `param` and `code` always present. */
export const OPENAI_ERRORS: ErrorDialect = {
  refuse: (response, error) =>
    send(response, error.status, {
      error: {
        message: error.message,
        type: openAiType(error.status),
        param: error.param,
        code: error.code,
      },
    }),
  fail: (response, status) =>
    send(response, status, {
      error: {
        message: `simulated failure ${status}`,
        type: 'simulated_error',
        param: null,
        code: null,
      },
    }),
};

/** Anthropic's error type for each status it answers (others: `api_error`). */
export function anthropicErrorType(status: number): string {
  const types: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    402: 'billing_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    504: 'timeout_error',
    529: 'overloaded_error',
  };
  return types[status] ?? (status < 500 ? 'invalid_request_error' : 'api_error');
}

/** Anthropic's shape: `{"type": "error", "error": {"type", "message"}}`. */
export const ANTHROPIC_ERRORS: ErrorDialect = {
  refuse: (response, error) =>
    send(response, error.status, {
      type: 'error',
      error: { type: anthropicErrorType(error.status), message: error.message },
    }),
  fail: (response, status) =>
    send(response, status, {
      type: 'error',
      error: { type: anthropicErrorType(status), message: `simulated failure ${status}` },
    }),
};

/** A caller's value as an error message names it: a string as is, anything else as JSON. */
export function shown(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
}
