import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type {
  FastifyBaseLogger,
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
} from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { databaseUnavailableError } from '../../errors/database-outage.js';
import type { IdGenerator } from '../../util/effects.js';
import { pathForLog } from '../../log-redaction.js';

/**
 * One error shape on the wire: `{"error": {"code", "message", "request_id", "param"?}}`. Known
 * framework errors become spec codes; a database that could not be used is a 503
 * SERVICE_UNAVAILABLE saying whether anything was committed (errors/database-outage.ts);
 * everything else is a 500 INTERNAL_ERROR whose details go to the log only (never a stack
 * trace, SQL text or upstream body to the caller).
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    // A database that could not be used is not a fault to report as one: say what was committed.
    const apiError =
      databaseUnavailableError(error, {
        id: request.id,
        idempotencyKey: headerValue(request.headers['idempotency-key']),
      }) ?? toApiError(error);
    if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
    void reply.code(apiError.status).headers(apiError.headers).send(apiError.toBody(request.id));
  });
  app.setNotFoundHandler((request, reply) => {
    void reply
      .code(404)
      .send(
        new ApiError(
          'NOT_FOUND',
          `no route ${request.method} ${request.url.split('?')[0] ?? ''}`,
        ).toBody(request.id),
      );
  });
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * Fastify's `frameworkErrors`: URLs the router refuses before any hook runs (a malformed
 * percent-encoding, a path parameter longer than `maxParamLength`). Answered in our shape; since
 * no hook runs, this stamps `X-Service-Request-Id` and writes the access line itself. The
 * messages never echo the URL (it may hold a key).
 */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const apiError = frameworkApiError(error);
  if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
  request.log.info(
    {
      method: request.method,
      path: pathForLog(request.url),
      client: request.clientAddress,
      status: apiError.status,
    },
    'request',
  );
  void reply
    .code(apiError.status)
    .header('x-service-request-id', request.id)
    .headers(apiError.headers)
    .send(apiError.toBody(request.id));
}

function frameworkApiError(error: FastifyError): ApiError {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return new ApiError(
        'INVALID_INPUT',
        'the URL path is not valid: it holds a malformed percent-encoding',
        'path',
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError(
        'INVALID_INPUT',
        'a path parameter is longer than this server accepts (100 characters)',
        'path',
      );
    default:
      return toApiError(error);
  }
}

/** The HTTP/1.1 connection errors Node's parser reports before any request exists. */
interface ConnectionError extends Error {
  readonly code?: string;
}

/**
 * Node's `clientError` handler (Fastify's `clientErrorHandler`): the answer to bytes that never
 * became a request, such as a request line and headers over Node's `maxHeaderSize` (16 KiB by
 * default: a too-long URL ends here) or a request that took too long to arrive. Written on the
 * raw socket in our error shape, with a fresh request id. Logged at debug level with the error
 * code only: the error's `rawPacket` holds the request's own bytes, Authorization included.
 */
export function answerClientError(
  ids: IdGenerator,
  logger: FastifyBaseLogger,
): (error: ConnectionError, socket: Socket) => void {
  return (error, socket) => {
    // A reset connection is gone: there is nobody to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const requestId = ids.next('req');
    const apiError = clientApiError(error.code);
    logger.debug({ reqId: requestId, code: error.code, status: apiError.status }, 'client error');
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify(apiError.toBody(requestId));
    socket.end(
      [
        `HTTP/1.1 ${apiError.status} ${STATUS_CODES[apiError.status] ?? ''}`,
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `X-Service-Request-Id: ${requestId}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  };
}

function clientApiError(code: string | undefined): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(
        'HEADERS_TOO_LARGE',
        'the request line and headers are larger than this server accepts (a URL that long is refused)',
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('REQUEST_TIMEOUT', 'the request did not arrive in time');
    default:
      return new ApiError('INVALID_INPUT', 'the request is not valid HTTP/1.1');
  }
}

function toApiError(error: FastifyError | ApiError): ApiError {
  if (error instanceof ApiError) return error;
  if (error.validation !== undefined) {
    const first = error.validation[0];
    const where = error.validationContext ?? 'body';
    const path = `${where}${first?.instancePath.replaceAll('/', '.') ?? ''}`;
    const missing = first?.params['missingProperty'];
    const extra = first?.params['additionalProperty'];
    const param =
      typeof missing === 'string'
        ? `${path}.${missing}`
        : typeof extra === 'string'
          ? `${path}.${extra}`
          : path;
    const allowed = first?.params['allowedValue'] ?? first?.params['allowedValues'];
    const message =
      typeof extra === 'string'
        ? 'is not a known field'
        : typeof missing === 'string'
          ? 'is required'
          : allowed !== undefined
            ? `must be ${[allowed].flat().map(String).join(' or ')}`
            : (first?.message ?? 'is invalid');
    return new ApiError('INVALID_INPUT', `${param} ${message}`, param);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('BODY_TOO_LARGE', 'the request body is larger than this server accepts');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(
        'UNSUPPORTED_MEDIA_TYPE',
        'unsupported Content-Type: send application/json',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('INVALID_INPUT', 'the JSON body is empty', 'body');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('INVALID_INPUT', 'Content-Length does not match the body', 'body');
    default:
      break;
  }
  if (error.statusCode === 400 && error instanceof SyntaxError)
    return new ApiError('INVALID_INPUT', 'the body is not valid JSON', 'body');
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError('INVALID_INPUT', error.message.slice(0, 200));
  }
  return new ApiError(
    'INTERNAL_ERROR',
    'internal error; quote the X-Service-Request-Id when you report it',
  );
}
