import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** One concurrency counter in Redis and how many may hold it at once. */
export interface SharedSlot {
  readonly set: string;
  readonly limit: number;
}

/** A taken set of slots: `release` gives them back (any number of calls, effective once). */
export type SlotsTaken = { readonly taken: true; readonly release: () => void };
/** Nothing taken: `full` is the first slot at its limit. */
export type SlotsRefused<S> = { readonly taken: false; readonly full: S };

// Scores are Redis's own clock (TIME) plus the lease, so the instances' clocks never matter.
// Expired members (their holder stopped renewing: it died) are pruned before counting. The key
// expires with its newest member, so a set nobody holds disappears by itself.
const CLOCK = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local function expire_with_newest(key)
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if newest[2] ~= nil then redis.call('PEXPIREAT', key, newest[2]) end
end
`;

/**
 * KEYS: one sorted set per slot. ARGV: lease ms, this holder's member, then each set's limit.
 * Takes a member in every set, or none: returns 0, or the 1-based index of the first full set.
 * A refused attempt adds nothing and extends no expiry.
 */
const TAKE = `${CLOCK}
local lease = tonumber(ARGV[1])
for index, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) >= tonumber(ARGV[index + 2]) then return index end
end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, now + lease, ARGV[2])
  expire_with_newest(key)
end
return 0
`;

/**
 * KEYS: the holder's sets. ARGV: lease ms, the holder's member. Pushes the member's expiry a
 * lease ahead where it is still held (XX: a slot already given back or lost is not recreated).
 */
const RENEW = `${CLOCK}
local lease = tonumber(ARGV[1])
for _, key in ipairs(KEYS) do
  if redis.call('ZADD', key, 'XX', 'CH', now + lease, ARGV[2]) == 1 then expire_with_newest(key) end
end
return 0
`;

interface SlotCommands {
  tollgateTakeSlots(...args: (string | number)[]): Promise<number>;
  tollgateRenewSlots(...args: (string | number)[]): Promise<number>;
}

/**
 * Concurrency slots shared by every instance through Redis, as leases: each request in flight
 * is one member of a sorted set per counter (its API key's, its account's), scored with the
 * time its lease ends. The holder renews the lease every third of it while the request runs
 * and removes the member when it ends; an instance that dies (kill -9, a lost host) stops
 * renewing, so its slots free themselves within one lease, whatever other callers attempt
 * meanwhile. Taking all of a request's slots is one script (atomic, one round trip).
 */
export class SharedSlots {
  private readonly commands: SlotCommands;

  constructor(
    private readonly redis: Redis,
    private readonly leaseMs: number,
  ) {
    if (!('tollgateTakeSlots' in redis)) {
      redis.defineCommand('tollgateTakeSlots', { lua: TAKE });
      redis.defineCommand('tollgateRenewSlots', { lua: RENEW });
    }
    this.commands = redis as unknown as SlotCommands;
  }

  async take<S extends SharedSlot>(slots: readonly S[]): Promise<SlotsTaken | SlotsRefused<S>> {
    const sets = slots.map((slot) => slot.set);
    // Unique per request; it only names this holder's members.
    const member = randomUUID();
    const full = await this.commands.tollgateTakeSlots(
      sets.length,
      ...sets,
      this.leaseMs,
      member,
      ...slots.map((slot) => slot.limit),
    );
    const refusedBy = slots[full - 1];
    if (refusedBy !== undefined) return { taken: false, full: refusedBy };
    const renewal = setInterval(
      () => {
        // A renewal that fails (Redis away for a moment) is retried at the next tick; one lost
        // for longer than the lease frees the slot early, which only errs on the caller's side.
        this.commands
          .tollgateRenewSlots(sets.length, ...sets, this.leaseMs, member)
          .catch(() => undefined);
      },
      Math.max(1, Math.floor(this.leaseMs / 3)),
    );
    renewal.unref();
    let released = false;
    return {
      taken: true,
      release: () => {
        if (released) return;
        released = true;
        clearInterval(renewal);
        const giveBack = this.redis.multi();
        for (const set of sets) giveBack.zrem(set, member);
        // Not given back (Redis away): the lease ends it.
        giveBack.exec().catch(() => undefined);
      },
    };
  }
}
