/**
 * Budget windows: the calendar periods a spend limit counts over, with boundaries at local
 * midnight in the configured time zone (docs/billing.md "Budgets"). Pure functions of an instant
 * and a zone, so the injected clock decides which window is current.
 */
export const BUDGET_WINDOWS = ['daily', 'weekly', 'monthly', 'total'] as const;
export type BudgetWindow = (typeof BUDGET_WINDOWS)[number];

/** The start of the current window of each kind, epoch ms; `total` never resets (0). */
export interface WindowStarts {
  readonly daily: number;
  readonly weekly: number;
  readonly monthly: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Local calendar fields of `instant` in `zone`. */
function localFields(instant: number, zone: string) {
  let formatter = formatters.get(zone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  const parts: Record<string, number> = {};
  for (const part of formatter.formatToParts(instant))
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  return {
    year: parts.year ?? 1970,
    month: parts.month ?? 1,
    day: parts.day ?? 1,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
    second: parts.second ?? 0,
  };
}

/** The zone's offset from UTC at `instant`, ms (local wall time minus UTC). */
function offsetAt(instant: number, zone: string): number {
  const local = localFields(instant, zone);
  const wall = Date.UTC(
    local.year,
    local.month - 1,
    local.day,
    local.hour,
    local.minute,
    local.second,
  );
  return wall - (instant - (((instant % 1000) + 1000) % 1000));
}

/** The instant of local midnight starting the given local date in `zone`. */
function localMidnight(year: number, monthIndex: number, day: number, zone: string): number {
  const wall = Date.UTC(year, monthIndex, day);
  // Twice: the offset at the guess may differ from the offset at the answer across a DST change.
  let instant = wall - offsetAt(wall, zone);
  instant = wall - offsetAt(instant, zone);
  return instant;
}

/**
 * Per zone, the starts computed last and the day they hold for: every start changes only at a
 * daily boundary, and the hold path asks on every request (formatting dates costs far more).
 */
const startsOfDay = new Map<string, { from: number; until: number; starts: WindowStarts }>();

export function windowStarts(now: number, zone: string): WindowStarts {
  const cached = startsOfDay.get(zone);
  if (cached !== undefined && now >= cached.from && now < cached.until) return cached.starts;
  const starts = computeWindowStarts(now, zone);
  const until = windowResetsAt('daily', now, zone) ?? starts.daily;
  startsOfDay.set(zone, { from: starts.daily, until, starts });
  return starts;
}

function computeWindowStarts(now: number, zone: string): WindowStarts {
  const local = localFields(now, zone);
  const daily = localMidnight(local.year, local.month - 1, local.day, zone);
  // Weeks start on Monday (ISO 8601). getUTCDay of the local date: 0 = Sunday.
  const weekday = new Date(Date.UTC(local.year, local.month - 1, local.day)).getUTCDay();
  const weekly = localMidnight(local.year, local.month - 1, local.day - ((weekday + 6) % 7), zone);
  const monthly = localMidnight(local.year, local.month - 1, 1, zone);
  return { daily, weekly, monthly };
}

/** When the window that contains `now` ends (the next reset), or `null` for `total`. */
export function windowResetsAt(window: BudgetWindow, now: number, zone: string): number | null {
  if (window === 'total') return null;
  const local = localFields(now, zone);
  if (window === 'daily') return localMidnight(local.year, local.month - 1, local.day + 1, zone);
  if (window === 'monthly') return localMidnight(local.year, local.month, 1, zone);
  const weekday = new Date(Date.UTC(local.year, local.month - 1, local.day)).getUTCDay();
  return localMidnight(local.year, local.month - 1, local.day - ((weekday + 6) % 7) + 7, zone);
}

/** The start of the current window of `window`: what a budget row's `budget_window_start` holds. */
export function currentWindowStart(window: BudgetWindow, starts: WindowStarts): number {
  return window === 'total' ? 0 : starts[window];
}
