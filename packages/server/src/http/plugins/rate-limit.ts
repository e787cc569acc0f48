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
  /** In flight at once for all keys of one account together. */
  readonly concurrentRequestsPerAccount: number;
}

/** Whose slots a request takes. */
export interface RateLimitSubject {
  readonly keyId: string;
  readonly accountId: string;
}

/**
 * Per-API-key limits: requests per minute (a fixed one-minute window from rate-limiter-flexible)
 * and requests in flight at once; and requests in flight per account, so that an account cannot
 * multiply its share by creating keys. In memory per instance, or shared through Redis when
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

  /** Takes one request slot and the key's and the account's concurrency slots; returns the function that frees them. */
  async acquire(subject: RateLimitSubject): Promise<() => void> {
    try {
      await this.perMinute.consume(subject.keyId);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes)
        throw rateLimited(
          rejection.msBeforeNext,
          `more than ${this.settings.requestsPerMinute} requests per minute for this API key`,
        );
      throw rejection;
    }
    const releaseKey = await this.takeSlot(
      `key:${subject.keyId}`,
      this.settings.concurrentRequests,
      'for this API key',
    );
    try {
      const releaseAccount = await this.takeSlot(
        `account:${subject.accountId}`,
        this.settings.concurrentRequestsPerAccount,
        "for this API key's account (all its keys together)",
      );
      return () => {
        releaseKey();
        releaseAccount();
      };
    } catch (error) {
      releaseKey();
      throw error;
    }
  }

  private takeSlot(
    counter: string,
    limit: number,
    scope: string,
  ): Promise<() => void> | (() => void) {
    return this.redis === undefined
      ? this.takeLocal(counter, limit, scope)
      : this.takeShared(this.redis, counter, limit, scope);
  }

  private takeLocal(counter: string, limit: number, scope: string): () => void {
    const current = this.inFlight.get(counter) ?? 0;
    if (current >= limit) throw rateLimited(1_000, `more than ${limit} requests at once ${scope}`);
    this.inFlight.set(counter, current + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = (this.inFlight.get(counter) ?? 1) - 1;
      if (now <= 0) this.inFlight.delete(counter);
      else this.inFlight.set(counter, now);
    };
  }

  private async takeShared(
    redis: Redis,
    counter: string,
    limit: number,
    scope: string,
  ): Promise<() => void> {
    const name = `tollgate:inflight:${counter}`;
    // The expiry bounds the damage of an instance that dies holding slots.
    const [[, count] = []] = ((await redis.multi().incr(name).expire(name, 600).exec()) ?? []) as [
      unknown,
      number,
    ][];
    if (typeof count === 'number' && count > limit) {
      await redis.decr(name);
      throw rateLimited(1_000, `more than ${limit} requests at once ${scope}`);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      redis.decr(name).catch(() => {});
    };
  }
}

function rateLimited(msBeforeNext: number, why: string): ApiError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new ApiError(
    'RATE_LIMITED',
    `rate limited: ${why}; retry after ${seconds} s, and read the original request before resending an unknown one`,
    undefined,
    { 'retry-after': String(seconds) },
  );
}
