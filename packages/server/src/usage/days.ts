import { z } from 'zod';
import { invalidInput } from '../errors/api-error.js';
import { parseInput } from '../errors/input-schema.js';

/** Milliseconds in a UTC day (UTC has no daylight saving; leap seconds do not exist in epoch time). */
export const DAY_MS = 86_400_000;

/**
 * A range of whole UTC days, both ends included: `[start, end)` in epoch milliseconds, where
 * `start` is `from` at 00:00 UTC and `end` the day after `to` at 00:00 UTC.
 */
export interface DayRange {
  /** `YYYY-MM-DD`. */
  readonly from: string;
  /** `YYYY-MM-DD`, included. */
  readonly to: string;
  readonly start: number;
  /** Exclusive. */
  readonly end: number;
}

const DAY = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;

/** `YYYY-MM-DD` of the UTC day holding `time`. */
export function dayOf(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

/** The first instant (00:00 UTC) of the day holding `time`. */
export function startOfDay(time: number): number {
  return time - (((time % DAY_MS) + DAY_MS) % DAY_MS);
}

/**
 * `YYYY-MM-DD` to its first instant (00:00 UTC); NaN for a day that does not exist
 * (`2026-02-30`) or lies outside 1970–9999.
 */
function dayStart(value: string): number {
  const time = DAY.test(value) ? Date.parse(`${value}T00:00:00Z`) : Number.NaN;
  return Number.isNaN(time) || time < 0 || dayOf(time) !== value ? Number.NaN : time;
}

/** A UTC day, `YYYY-MM-DD`, as its first instant (00:00 UTC). */
const utcDay = z
  .string()
  .refine((value) => !Number.isNaN(dayStart(value)), {
    error: 'must be a UTC day written YYYY-MM-DD (1970-01-01 or later)',
  })
  .transform(dayStart);

/**
 * A day range as asked (a usage range's, a statement's or a wallet export's query string, the
 * CLI's flags): each end optional. `to` is judged first.
 */
const dayRangeInput = z.object({ to: utcDay.optional(), from: utcDay.optional() });

/**
 * Reads `from` and `to` (`YYYY-MM-DD`, each optional) into a day range: `to` defaults to the day
 * of `now`, `from` to `defaultFrom(to's start)`. `from` after `to`, or more than `maxDays` days
 * in all, is the 400 naming `from`.
 */
export function parseDayRange(
  input: z.input<typeof dayRangeInput>,
  options: { now: number; defaultFrom: (toStart: number) => number; maxDays?: number },
): DayRange {
  const asked = parseInput(dayRangeInput, input);
  const toStart = asked.to ?? startOfDay(options.now);
  const start = asked.from ?? options.defaultFrom(toStart);
  if (start > toStart) throw invalidInput('from', `must not be after to (${dayOf(toStart)})`);
  const days = (toStart - start) / DAY_MS + 1;
  if (options.maxDays !== undefined && days > options.maxDays)
    throw invalidInput(
      'from',
      `the range is ${days} days; at most ${options.maxDays} days may be asked at once`,
    );
  return { from: dayOf(start), to: dayOf(toStart), start, end: toStart + DAY_MS };
}

/** The first day of the UTC month holding `time`. */
export function startOfMonth(time: number): number {
  const date = new Date(time);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}
