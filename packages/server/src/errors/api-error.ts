import { errorStatus, type ErrorBody, type ErrorCode } from '@tollgate/protocol';

/**
 * The one error type routes throw. Its status comes from the code (one table, no drift); the
 * message is written for the caller and never carries SQL, stack traces, secrets or upstream
 * bodies.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = errorStatus[code];
    this.headers = headers;
  }

  toBody(requestId: string): ErrorBody {
    return errorBody(this.code, this.message, requestId, this.param);
  }
}

export function errorBody(
  code: ErrorCode,
  message: string,
  requestId: string,
  param?: string,
): ErrorBody {
  return {
    error: { code, message, request_id: requestId, ...(param === undefined ? {} : { param }) },
  };
}

export const invalidInput = (param: string, message: string) =>
  new ApiError('INVALID_INPUT', `${param}: ${message}`, param);
export const notFound = (what = 'resource') => new ApiError('NOT_FOUND', `no such ${what}`);
