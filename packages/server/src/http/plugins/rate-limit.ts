import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { ApiError } from '../../errors/api-error.js';
import { SharedSlots } from './shared-slots.js';

export interface RateLimitSettings {
  readonly requestsPerMinute: number;
  readonly concurrentRequests: number;
  /** In flight at once for all keys of one account together. */
  readonly concurrentRequestsPerAccount: number;
  /**
   * Redis only: how long a request's concurrency slots outlive the last renewal by the instance
   * running it (renewed every third of it), so the slots of an instance that died free
   * themselves within this time.
   */
  readonly concurrencyLeaseMs: number;
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
 * configured (concurrency slots as leases that a dead instance cannot keep: shared-slots.ts).
 * Redis only counts; it never decides money. While Redis is unreachable (not connected, or a
 * command fails) each request is counted by this instance alone, as without Redis, and
 * `onSharedUnavailable` is told: requests keep being served and billed as ever, the limits
 * being per instance meanwhile (docs/operations.md, "Several instances").
 */
export class RateLimits {
  private readonly localPerMinute: RateLimiterAbstract;
  private readonly inFlight = new Map<string, number>();
  private readonly shared:
    { redis: Redis; perMinute: RateLimiterAbstract; slots: SharedSlots } | undefined;

  constructor(
    private readonly settings: RateLimitSettings,
    redis: Redis | undefined,
    private readonly onSharedUnavailable: (error: unknown) => void = () => {},
  ) {
    this.localPerMinute = new RateLimiterMemory({
      points: settings.requestsPerMinute,
      duration: 60,
    });
    this.shared =
      redis === undefined
        ? undefined
        : {
            redis,
            perMinute: new RateLimiterRedis({
              storeClient: redis,
              points: settings.requestsPerMinute,
              duration: 60,
              keyPrefix: 'tollgate:rpm',
            }),
            slots: new SharedSlots(redis, settings.concurrencyLeaseMs),
          };
  }

  /** Takes one request slot and the key's and the account's concurrency slots; returns the function that frees them. */
  async acquire(subject: RateLimitSubject): Promise<() => void> {
    const shared = this.shared;
    if (shared !== undefined) {
      // Known lost (ioredis reconnecting): counted here at once, rather than waiting on its
      // retries. Still connecting (a start): its commands wait for the connection.
      if (LOST.has(shared.redis.status))
        this.onSharedUnavailable(new Error(`Redis is ${shared.redis.status}`));
      else
        try {
          await this.consumeMinute(shared.perMinute, subject);
          return await this.takeShared(shared.slots, this.slotsOf(subject));
        } catch (error) {
          if (error instanceof ApiError) throw error;
          this.onSharedUnavailable(error);
        }
    }
    await this.consumeMinute(this.localPerMinute, subject);
    return this.takeLocal(this.slotsOf(subject));
  }

  private async consumeMinute(
    limiter: RateLimiterAbstract,
    subject: RateLimitSubject,
  ): Promise<void> {
    try {
      await limiter.consume(subject.keyId);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes)
        throw rateLimited(
          rejection.msBeforeNext,
          `more than ${this.settings.requestsPerMinute} requests per minute for this API key`,
        );
      throw rejection;
    }
  }

  private slotsOf(subject: RateLimitSubject): Slot[] {
    return [
      {
        counter: `key:${subject.keyId}`,
        limit: this.settings.concurrentRequests,
        scope: 'for this API key',
      },
      {
        counter: `account:${subject.accountId}`,
        limit: this.settings.concurrentRequestsPerAccount,
        scope: "for this API key's account (all its keys together)",
      },
    ];
  }

  /** Takes every slot or none (nothing else runs in between: one event-loop turn). */
  private takeLocal(slots: readonly Slot[]): () => void {
    for (const slot of slots) {
      if ((this.inFlight.get(slot.counter) ?? 0) >= slot.limit) throw overLimit(slot);
    }
    for (const slot of slots)
      this.inFlight.set(slot.counter, (this.inFlight.get(slot.counter) ?? 0) + 1);
    return once(() => {
      for (const slot of slots) {
        const now = (this.inFlight.get(slot.counter) ?? 1) - 1;
        if (now <= 0) this.inFlight.delete(slot.counter);
        else this.inFlight.set(slot.counter, now);
      }
    });
  }

  /**
   * Takes every slot or none, in one round trip: shared-slots.ts. The sets are named apart from
   * the counters of earlier versions (`tollgate:inflight:*`, plain integers), which a rolling
   * upgrade may still find in Redis and a sorted-set command would refuse.
   */
  private async takeShared(slots: SharedSlots, wanted: readonly Slot[]): Promise<() => void> {
    const result = await slots.take(
      wanted.map((slot) => ({ ...slot, set: `tollgate:slots:${slot.counter}` })),
    );
    if (!result.taken) throw overLimit(result.full);
    return result.release;
  }
}

/** ioredis states in which the connection is known to be gone. */
const LOST: ReadonlySet<string> = new Set(['reconnecting', 'close', 'end']);

/** One concurrency counter a request holds while it runs. */
interface Slot {
  readonly counter: string;
  readonly limit: number;
  readonly scope: string;
}

function overLimit(slot: Slot): ApiError {
  return rateLimited(1_000, `more than ${slot.limit} requests at once ${slot.scope}`);
}

/** `release` callable any number of times, effective once. */
function once(release: () => void): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    release();
  };
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
