import type { FastifyError, FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';

/**
 * One error shape on the wire: `{"error": {"code", "message", "request_id", "param"?}}`. Known
 * framework errors become spec codes; everything else is a 500 INTERNAL_ERROR whose details go
 * to the log only (never a stack trace, SQL text or upstream body to the caller).
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    const apiError = toApiError(error);
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
    const message =
      typeof extra === 'string'
        ? 'is not a known field'
        : typeof missing === 'string'
          ? 'is required'
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
