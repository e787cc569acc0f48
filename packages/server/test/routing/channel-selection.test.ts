import { describe, expect, it } from 'vitest';
import { pickChannel, seededRandom } from '../../src/routing/channel-selection.js';
import type { Channel } from '../../src/routing/channels.js';

function channel(id: string, weight: number, priority: number): Channel {
  return {
    id,
    modelId: 'm',
    upstream: id,
    model: 'm',
    weight,
    priority,
    maxConcurrency: null,
    requestsPerMinute: null,
    cost: null,
  };
}

describe('weighted selection within the highest priority', () => {
  it('over 10,000 seeded picks each channel gets its weight share within 2 points', () => {
    const channels = [channel('a', 1, 0), channel('b', 3, 0), channel('c', 6, 0)];
    const random = seededRandom(22);
    const counts = new Map<string, number>();
    for (let pick = 0; pick < 10_000; pick += 1) {
      const chosen = pickChannel(channels, random);
      counts.set(chosen?.id ?? 'none', (counts.get(chosen?.id ?? 'none') ?? 0) + 1);
    }
    expect(counts.get('none')).toBeUndefined();
    expect(Math.abs((counts.get('a') ?? 0) / 10_000 - 0.1)).toBeLessThan(0.02);
    expect(Math.abs((counts.get('b') ?? 0) / 10_000 - 0.3)).toBeLessThan(0.02);
    expect(Math.abs((counts.get('c') ?? 0) / 10_000 - 0.6)).toBeLessThan(0.02);
  });

  it('a lower priority is never picked while a higher one is usable, whatever its weight', () => {
    const channels = [channel('backup', 1_000, 0), channel('primary', 1, 5)];
    const random = seededRandom(7);
    for (let pick = 0; pick < 1_000; pick += 1)
      expect(pickChannel(channels, random)?.id).toBe('primary');
    expect(pickChannel([channel('backup', 1, 0)], random)?.id).toBe('backup');
  });

  it('no usable channel picks nothing; the edges of the random range stay in range', () => {
    expect(pickChannel([], seededRandom(1))).toBeUndefined();
    const channels = [channel('a', 1, 0), channel('b', 1, 0)];
    expect(pickChannel(channels, () => 0)?.id).toBe('a');
    expect(pickChannel(channels, () => 0.999_999_999)?.id).toBe('b');
  });
});
