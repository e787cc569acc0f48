import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { ApiError } from '../../errors/api-error.js';

export interface RateLimitSettings {
  readonly requestsPerMinute: number;
  readonly concurrentRequests: number;
}

/**
 * Per-API-key limits: requests per minute (a fixed one-minute window from rate-limiter-flexible)
 * and requests in flight at once. In memory per instance, or shared through Redis when
 * configured. Redis only counts; it never decides money.
 */
export class RateLimits {
  private readonly perMinute: RateLimiterAbstract;
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly settings: RateLimitSettings,
    private readonly redis: Redis | undefined,
  ) {
    this.perMinute =
      redis === undefined
        ? new RateLimiterMemory({ points: settings.requestsPerMinute, duration: 60 })
        : new RateLimiterRedis({
            storeClient: redis,
            points: settings.requestsPerMinute,
            duration: 60,
            keyPrefix: 'tollgate:rpm',
          });
  }

  /** Takes one request slot and one concurrency slot; returns the function that frees the latter. */
  async acquire(keyId: string): Promise<() => void> {
    try {
      await this.perMinute.consume(keyId);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes)
        throw rateLimited(
          rejection.msBeforeNext,
          `more than ${this.settings.requestsPerMinute} requests per minute`,
        );
      throw rejection;
    }
    return this.redis === undefined
      ? this.acquireLocal(keyId)
      : this.acquireShared(this.redis, keyId);
  }

  private acquireLocal(keyId: string): () => void {
    const current = this.inFlight.get(keyId) ?? 0;
    if (current >= this.settings.concurrentRequests)
      throw rateLimited(1_000, `more than ${this.settings.concurrentRequests} requests at once`);
    this.inFlight.set(keyId, current + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = (this.inFlight.get(keyId) ?? 1) - 1;
      if (now <= 0) this.inFlight.delete(keyId);
      else this.inFlight.set(keyId, now);
    };
  }

  private async acquireShared(redis: Redis, keyId: string): Promise<() => void> {
    const counter = `tollgate:inflight:${keyId}`;
    // The expiry bounds the damage of an instance that dies holding slots.
    const [[, count] = []] = ((await redis.multi().incr(counter).expire(counter, 600).exec()) ??
      []) as [unknown, number][];
    if (typeof count === 'number' && count > this.settings.concurrentRequests) {
      await redis.decr(counter);
      throw rateLimited(1_000, `more than ${this.settings.concurrentRequests} requests at once`);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      redis.decr(counter).catch(() => {});
    };
  }
}

function rateLimited(msBeforeNext: number, why: string): ApiError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new ApiError(
    'RATE_LIMITED',
    `rate limited: ${why} for this API key; retry after ${seconds} s, and read the original request before resending an unknown one`,
    undefined,
    { 'retry-after': String(seconds) },
  );
}
