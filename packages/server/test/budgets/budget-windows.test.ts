import { describe, expect, it } from 'vitest';
import { windowResetsAt, windowStarts } from '../../src/budgets/budget-windows.js';

const at = (iso: string) => Date.parse(iso);
const iso = (time: number | null) => (time === null ? null : new Date(time).toISOString());

describe('budget windows turn over at local midnight of the configured zone', () => {
  it('puts the Shanghai day, week (from Monday) and month boundaries at 16:00 UTC', () => {
    // 2026-11-25T23:30 in Shanghai, a Wednesday.
    const now = at('2026-11-25T15:30:00Z');
    const starts = windowStarts(now, 'Asia/Shanghai');
    expect(iso(starts.daily)).toBe('2026-11-24T16:00:00.000Z');
    expect(iso(starts.weekly)).toBe('2026-11-22T16:00:00.000Z');
    expect(iso(starts.monthly)).toBe('2026-10-31T16:00:00.000Z');
    expect(iso(windowResetsAt('daily', now, 'Asia/Shanghai'))).toBe('2026-11-25T16:00:00.000Z');
    expect(iso(windowResetsAt('weekly', now, 'Asia/Shanghai'))).toBe('2026-11-29T16:00:00.000Z');
    expect(iso(windowResetsAt('monthly', now, 'Asia/Shanghai'))).toBe('2026-11-30T16:00:00.000Z');
    expect(windowResetsAt('total', now, 'Asia/Shanghai')).toBeNull();
  });

  it('moves to the next window at the boundary instant itself, not a millisecond earlier', () => {
    const boundary = at('2026-11-25T16:00:00Z');
    expect(windowStarts(boundary - 1, 'Asia/Shanghai').daily).toBe(at('2026-11-24T16:00:00Z'));
    expect(windowStarts(boundary, 'Asia/Shanghai').daily).toBe(boundary);
  });

  it('rolls a Sunday into the week that began on the Monday before', () => {
    // Sunday 2026-11-29 12:00 in Shanghai.
    const starts = windowStarts(at('2026-11-29T04:00:00Z'), 'Asia/Shanghai');
    expect(iso(starts.weekly)).toBe('2026-11-22T16:00:00.000Z');
  });

  it('follows daylight saving time in zones that have it (a 23-hour day)', () => {
    // New York springs forward on 2026-03-08: that local day is 23 hours long.
    const noon = at('2026-03-08T16:00:00Z');
    expect(iso(windowStarts(noon, 'America/New_York').daily)).toBe('2026-03-08T05:00:00.000Z');
    expect(iso(windowResetsAt('daily', noon, 'America/New_York'))).toBe('2026-03-09T04:00:00.000Z');
  });

  it('rolls the year over for a December month', () => {
    const now = at('2026-12-31T20:00:00Z'); // 2027-01-01 04:00 in Shanghai
    expect(iso(windowStarts(now, 'Asia/Shanghai').monthly)).toBe('2026-12-31T16:00:00.000Z');
    expect(iso(windowResetsAt('monthly', at('2026-12-15T00:00:00Z'), 'Asia/Shanghai'))).toBe(
      '2026-12-31T16:00:00.000Z',
    );
  });
});
