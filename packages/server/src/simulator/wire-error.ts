import type { ServerResponse } from 'node:http';
import type { SimulatorDialect } from './dialect-path.js';
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
  /**
   * `[sim:context_overflow]`: the input does not fit the model's context window, refused as the
   * provider imitated refuses it (the chat routes: as the path's `dialect`).
   */
  contextOverflow(response: ServerResponse, dialect: SimulatorDialect): void;
}

/**
 * Each provider's context-length refusal of a chat completion, as it sends it (status 400; the
 * bodies of test/providers/fixtures/provider-dialect-outcomes.json, with the simulator's own
 * figures): what the gateway must tell apart from its other refusals
 * (providers/context-length.ts).
 */
const CONTEXT_OVERFLOW_BODIES: Readonly<Record<SimulatorDialect, unknown>> = {
  openai: {
    error: {
      message:
        "This model's maximum context length is 131072 tokens. However, your messages resulted in 131073 tokens. Please reduce the length of the messages.",
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  },
  deepseek: {
    error: {
      message:
        "This model's maximum context length is 131072 tokens. However, you requested 131073 tokens (131073 in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_request_error',
    },
  },
  qwen: {
    error: {
      message:
        '<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 129024]',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_parameter_error',
    },
  },
  glm: { error: { code: '1261', message: 'Prompt 超长' } },
  kimi: {
    error: {
      message: 'Invalid request: Your request exceeded model token limit: 262144',
      type: 'invalid_request_error',
    },
  },
  // Gemini's OpenAI compatibility sends Google's error object in a list.
  gemini: [
    {
      error: {
        code: 400,
        message:
          'The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).',
        status: 'INVALID_ARGUMENT',
      },
    },
  ],
};

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
  contextOverflow: (response, dialect) => send(response, 400, CONTEXT_OVERFLOW_BODIES[dialect]),
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
  // The Responses API's refusal of an input beyond the model's context window.
  contextOverflow: (response) =>
    send(response, 400, {
      error: {
        message:
          'Your input exceeds the context window of this model. Please adjust your input and try again.',
        type: 'invalid_request_error',
        param: 'input',
        code: 'context_length_exceeded',
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
  contextOverflow: (response) =>
    send(response, 400, {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'prompt is too long: 200001 tokens > 200000 maximum',
      },
    }),
};

/** A caller's value as an error message names it: a string as is, anything else as JSON. */
export function shown(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
}
