import type { Clock } from '../../src/util/effects.js';

/** A clock tests move by hand. */
export function manualClock(
  start = Date.parse('2026-11-23T00:00:00Z'),
): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => now, advance: (ms) => void (now += ms) };
}
