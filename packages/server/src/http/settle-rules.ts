import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';

/** Spec 4.3 / 4.5: a settle body is at most 4096 bytes (Fastify answers 413 above it). */
export const SETTLE_BODY_LIMIT = 4_096;

/** Settles take no query parameters (spec 4.2, 4.3, 4.5): one rule for every settle route. */
export function refuseQueryString(request: FastifyRequest): void {
  if (request.url.includes('?'))
    throw new ApiError('INVALID_INPUT', 'settle takes no query parameters', 'query');
}
