import { describe, expect, it } from 'vitest';
import { createIdGenerator } from '../../src/util/effects.js';
import { manualClock } from '../helpers/clock.js';

describe('ids', () => {
  it('never repeats, across many refills of the random pool and within one millisecond', () => {
    const ids = createIdGenerator(manualClock());
    const drawn = Array.from({ length: 10_000 }, () => ids.next('req'));
    expect(new Set(drawn).size).toBe(drawn.length);
    const randomParts = drawn.map((id) => id.slice(-16));
    expect(new Set(randomParts).size).toBe(drawn.length);
    for (const id of drawn) expect(id).toMatch(/^req_[0-9a-z]{9}[0-9A-Za-z]{16}$/);
  });

  it('keeps ids of separate generators (instances) apart', () => {
    const clock = manualClock();
    const first = Array.from({ length: 300 }, () => createIdGenerator(clock).next('hold'));
    expect(new Set(first).size).toBe(first.length);
  });
});
