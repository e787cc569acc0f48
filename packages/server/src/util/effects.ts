import { randomBytes } from 'node:crypto';

/** Time source, injected so tests control it. Epoch milliseconds. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Id source, injected so tests can predict ids. */
export interface IdGenerator {
  /** A new id `<prefix>_<time><random>`, sortable by creation time within one process. */
  next(prefix: string): string;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Encodes bytes as base62 characters (each byte maps to one character; bias is irrelevant for ids). */
export function base62(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += BASE62[byte % 62];
  return text;
}

/**
 * Time-ordered ids: 9 base36 characters of milliseconds, then 16 random base62 characters
 * (about 95 bits), so ids from several instances do not collide.
 */
export function createIdGenerator(clock: Clock = systemClock): IdGenerator {
  return {
    next(prefix) {
      const time = clock.now().toString(36).padStart(9, '0');
      return `${prefix}_${time}${base62(randomBytes(16))}`;
    },
  };
}
