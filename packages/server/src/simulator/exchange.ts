import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Directives } from './directives.js';
import { BadRequest } from './embeddings.js';
import { delay, sendError } from './http-io.js';
import { SIMULATOR_LIMITS } from './limits.js';

/**
 * The faults of the exchange itself, common to every task route: `[sim:hang]`, `[sim:delay]`,
 * `[sim:fail]`. False when the request is answered (or left unanswered) here.
 */
export async function exchangeFaults(
  directives: Directives,
  response: ServerResponse,
): Promise<boolean> {
  if (directives.hang === true) return false;
  if (directives.delayMs !== undefined && !(await delay(directives.delayMs, response)))
    return false;
  if (directives.fail !== undefined) {
    sendError(response, directives.fail, 'simulated_error', `simulated failure ${directives.fail}`);
    return false;
  }
  return true;
}

/** The request's `Idempotency-Key`, if any; throws `BadRequest` for an empty, repeated or long one. */
export function idempotencyKeyOf(request: IncomingMessage): string | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  const most = SIMULATOR_LIMITS.idempotencyKeyCharacters;
  if (typeof key !== 'string' || key === '' || key.length > most)
    throw new BadRequest(`Idempotency-Key must be one value of 1 to ${most} characters`);
  return key;
}

/** 429 when every kept job is unfinished (nothing can be evicted). */
export function tooManyJobs(response: ServerResponse, what: string): void {
  sendError(
    response,
    429,
    'too_many_jobs',
    `${SIMULATOR_LIMITS.videoJobs} ${what} are unfinished; retry later`,
    { 'retry-after': '1' },
  );
}

export function notFound(response: ServerResponse, id: string): void {
  sendError(response, 404, 'not_found', `no such object: ${id}`);
}
