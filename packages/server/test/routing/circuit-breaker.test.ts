import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/routing/circuit-breaker.js';
import { manualClock } from '../helpers/clock.js';

const settings = { failureThreshold: 3, cooldownMs: 1_000, maxCooldownMs: 4_000 };

describe('a channel circuit breaker', () => {
  it('opens after consecutive certain failures, cools down, probes once, and closes on success', () => {
    const clock = manualClock();
    const breaker = new CircuitBreaker(clock, settings);
    breaker.failedCertainly();
    breaker.failedCertainly();
    expect(breaker.state()).toBe('closed');
    breaker.failedCertainly();
    expect(breaker.state()).toBe('open');
    expect(breaker.admits()).toBe(false);
    clock.advance(999);
    expect(breaker.admits()).toBe(false);
    clock.advance(1);
    expect(breaker.state()).toBe('half_open');
    expect(breaker.admits()).toBe(true);
    breaker.sending();
    // One probe at a time: the others still skip the channel.
    expect(breaker.admits()).toBe(false);
    breaker.succeeded();
    expect(breaker.state()).toBe('closed');
    expect(breaker.consecutiveFailures()).toBe(0);
  });

  it('a success between failures resets the count: failures must be consecutive', () => {
    const breaker = new CircuitBreaker(manualClock(), settings);
    breaker.failedCertainly();
    breaker.failedCertainly();
    breaker.succeeded();
    breaker.failedCertainly();
    breaker.failedCertainly();
    expect(breaker.state()).toBe('closed');
  });

  it('a failed probe opens it again for twice as long, capped', () => {
    const clock = manualClock();
    const breaker = new CircuitBreaker(clock, settings);
    for (let failure = 0; failure < 3; failure += 1) breaker.failedCertainly();
    const cooldowns: number[] = [];
    for (let probe = 0; probe < 4; probe += 1) {
      const opened = clock.now();
      const endsAt = breaker.cooldownEndsAt() ?? 0;
      clock.advance(endsAt - opened);
      expect(breaker.state()).toBe('half_open');
      breaker.sending();
      breaker.failedCertainly();
      cooldowns.push((breaker.cooldownEndsAt() ?? 0) - clock.now());
    }
    expect(cooldowns).toEqual([2_000, 4_000, 4_000, 4_000]);
    expect(breaker.state()).toBe('open');
  });

  it('a probe that ends uncertain frees the probe slot without closing the breaker', () => {
    const clock = manualClock();
    const breaker = new CircuitBreaker(clock, settings);
    for (let failure = 0; failure < 3; failure += 1) breaker.failedCertainly();
    clock.advance(1_000);
    breaker.sending();
    expect(breaker.admits()).toBe(false);
    breaker.settledWithoutVerdict();
    expect(breaker.state()).toBe('half_open');
    expect(breaker.admits()).toBe(true);
  });
});
