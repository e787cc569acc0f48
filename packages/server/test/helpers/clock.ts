import type { Clock } from '../../src/util/effects.js';

/** A clock tests move by hand. */
export function manualClock(
  start = Date.parse('2026-11-23T00:00:00Z'),
): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => now, advance: (ms) => void (now += ms) };
}

/** A clock that runs as real time does and that a test may move ahead: see `skippingClock`. */
export interface SkippingClock extends Clock {
  /** Moves the clock `ms` ahead (never back), as if the process had waited that long. */
  advance(ms: number): void;
  /** Moves the clock ahead to `at` if it is not there yet. */
  advanceTo(at: number): void;
}

/** The clocks `skippingClock` made: the task helpers skip idle time only on those. */
const skipping = new WeakSet<Clock>();

/**
 * The system clock plus the time a test skipped: it runs with real time (ids stay ordered, a
 * step's durations are real), and the test moves it ahead instead of waiting for what the code
 * decides by it — a task's next poll, a back-off, a simulated job's progress when the simulator
 * shares it (helpers/tasks.ts `startTaskGateway`). What is judged by the database's clock (a
 * claim's lease) and real timers (upstream timeouts, `[sim:delay]`) still take real time.
 */
export function skippingClock(): SkippingClock {
  let skipped = 0;
  const clock: SkippingClock = {
    now: () => Date.now() + skipped,
    advance: (ms) => void (skipped += Math.max(0, ms)),
    advanceTo: (at) => clock.advance(at - clock.now()),
  };
  skipping.add(clock);
  return clock;
}

/** The clock as a `SkippingClock` if `skippingClock` made it; else undefined. */
export function asSkippingClock(clock: Clock): SkippingClock | undefined {
  return skipping.has(clock) ? (clock as SkippingClock) : undefined;
}
