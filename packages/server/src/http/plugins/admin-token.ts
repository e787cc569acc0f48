import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { ApiError } from '../../errors/api-error.js';
import { soleAuthorizationHeader } from './authenticate.js';

/** `Bearer <token>` from an Authorization header, or undefined when absent or not a bearer. */
export function bearerTokenOrNothing(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * Wrong admin tokens one client address may send per window before it is refused. Ten a
 * minute leaves room for an operator's typos and turns a guessing run (thousands a second
 * without it) into ten a minute.
 */
export const ADMIN_TOKEN_FAILURES_PER_WINDOW = 10;
const WINDOW_SECONDS = 60;

/**
 * Counts wrong admin tokens per client address (in memory, or in Redis shared by every
 * instance when configured). Past the limit, that address gets 429 for the rest of the window
 * on every admin call, the right token included, so a guesser cannot tell a hit from a miss.
 * Other addresses are not affected.
 */
export class AdminTokenThrottle {
  private readonly failures: RateLimiterAbstract;

  constructor(redis: Redis | undefined) {
    const options = { points: ADMIN_TOKEN_FAILURES_PER_WINDOW, duration: WINDOW_SECONDS };
    this.failures =
      redis === undefined
        ? new RateLimiterMemory(options)
        : new RateLimiterRedis({
            ...options,
            storeClient: redis,
            keyPrefix: 'tollgate:admin-token-failures',
          });
  }

  /** Throws 429 when `address` has used up its wrong tries for this window. */
  async refuseIfBlocked(address: string): Promise<void> {
    const state = await this.failures.get(address);
    if (state !== null && state.consumedPoints > ADMIN_TOKEN_FAILURES_PER_WINDOW)
      throw throttled(state.msBeforeNext);
  }

  /** Counts one wrong token; throws 429 when it is one too many. */
  async recordFailure(address: string): Promise<void> {
    try {
      await this.failures.consume(address);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) throw throttled(rejection.msBeforeNext);
      throw rejection;
    }
  }
}

/**
 * Runs before the admin routes' own token check (routes/admin.ts), in the same scope: refuses
 * several Authorization headers, refuses a throttled address, and counts a wrong bearer token
 * (the route's check then answers 403 for it). A missing token is not counted: it guesses
 * nothing. When no admin token is configured, it does nothing (the admin API answers 404).
 */
export function guardAdminToken(
  scope: FastifyInstance,
  adminToken: string | undefined,
  throttle: AdminTokenThrottle,
): void {
  if (adminToken === undefined) return;
  const expected = digest(adminToken);
  scope.addHook('onRequest', async (request) => {
    const header = soleAuthorizationHeader(request);
    await throttle.refuseIfBlocked(request.clientAddress);
    const token = bearerTokenOrNothing(header);
    if (token !== undefined && !timingSafeEqual(digest(token), expected))
      await throttle.recordFailure(request.clientAddress);
  });
}

const digest = (text: string) => createHash('sha256').update(text).digest();

function throttled(msBeforeNext: number): ApiError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new ApiError(
    'RATE_LIMITED',
    `too many wrong admin tokens from this address; retry after ${seconds} s`,
    undefined,
    { 'retry-after': String(seconds) },
  );
}
