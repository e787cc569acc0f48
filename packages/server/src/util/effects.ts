import { randomFillSync, randomUUID } from 'node:crypto';

/** Time source, injected so tests control it. Epoch milliseconds. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Id source, injected so tests can predict ids. */
export interface IdGenerator {
  /** A new id `<prefix>_<time><random>`, sortable by creation time within one process. */
  next(prefix: string): string;
  /** A random UUID (version 4): ids the spec says are UUIDs (H3 tasks). */
  uuid(): string;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Encodes bytes as base62 characters (each byte maps to one character; bias is irrelevant for ids). */
export function base62(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += BASE62[byte % 62];
  return text;
}

const ID_RANDOM_BYTES = 16;
const POOL_IDS = 256;

/**
 * Time-ordered ids: 9 base36 characters of milliseconds, then 16 random base62 characters
 * (about 95 bits), so ids from several instances do not collide. The random bytes come from
 * one CSPRNG fill per 256 ids (a request takes three or four ids, and a system call per id
 * showed in profiles); ids are unique names, not secrets: keys and codes draw their own bytes.
 */
export function createIdGenerator(clock: Clock = systemClock): IdGenerator {
  const pool = new Uint8Array(ID_RANDOM_BYTES * POOL_IDS);
  let offset = pool.length;
  // A request takes its ids within a millisecond or two: the time's text is written once per
  // millisecond, and the random characters are read from the pool in place (no view per id).
  let lastTime = Number.NaN;
  let timeText = '';
  return {
    next(prefix) {
      if (offset === pool.length) {
        randomFillSync(pool);
        offset = 0;
      }
      const now = clock.now();
      if (now !== lastTime) {
        lastTime = now;
        timeText = now.toString(36).padStart(9, '0');
      }
      let random = '';
      for (const end = offset + ID_RANDOM_BYTES; offset < end; offset += 1)
        random += BASE62[(pool[offset] ?? 0) % 62];
      return `${prefix}_${timeText}${random}`;
    },
    uuid: () => randomUUID(),
  };
}
