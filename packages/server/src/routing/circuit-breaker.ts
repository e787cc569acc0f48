import type { Clock } from '../util/effects.js';

export interface BreakerSettings {
  /** Consecutive certain failures that open the breaker. */
  readonly failureThreshold: number;
  /** The first cool-down; each failed probe doubles it, up to `maxCooldownMs`. */
  readonly cooldownMs: number;
  readonly maxCooldownMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = {
  failureThreshold: 5,
  cooldownMs: 10_000,
  maxCooldownMs: 300_000,
};

/** `closed`: in use; `open`: cooling down, skipped; `half_open`: one probe allowed. */
export type BreakerState = 'closed' | 'open' | 'half_open';

/**
 * One channel's circuit breaker. Only certain failures (docs/routing.md) count: after
 * `failureThreshold` in a row the channel cools down; once the cool-down is over one request
 * probes it (half-open) while others skip it; the probe's success closes the breaker, its
 * failure opens it again for twice as long (backoff, capped).
 */
export class CircuitBreaker {
  private failures = 0;
  private openedAt: number | null = null;
  private cooldownMs: number;
  private probing = false;

  constructor(
    private readonly clock: Clock,
    private readonly settings: BreakerSettings = DEFAULT_BREAKER,
  ) {
    this.cooldownMs = settings.cooldownMs;
  }

  state(): BreakerState {
    if (this.openedAt === null) return 'closed';
    return this.clock.now() - this.openedAt >= this.cooldownMs ? 'half_open' : 'open';
  }

  /** Whether a request may use the channel now; a half-open breaker admits one probe at a time. */
  admits(): boolean {
    const state = this.state();
    return state === 'closed' || (state === 'half_open' && !this.probing);
  }

  /** Called when a request is sent on the channel (marks the probe of a half-open breaker). */
  sending(): void {
    if (this.state() === 'half_open') this.probing = true;
  }

  succeeded(): void {
    this.failures = 0;
    this.openedAt = null;
    this.probing = false;
    this.cooldownMs = this.settings.cooldownMs;
  }

  /** A certain failure (the upstream did nothing); uncertain outcomes say nothing of health. */
  failedCertainly(): void {
    if (this.probing || this.state() === 'half_open') {
      this.cooldownMs = Math.min(this.cooldownMs * 2, this.settings.maxCooldownMs);
      this.openedAt = this.clock.now();
      this.probing = false;
      return;
    }
    this.failures += 1;
    if (this.failures >= this.settings.failureThreshold) this.openedAt = this.clock.now();
  }

  /** A request that ended without a verdict on health (uncertain): frees a probe slot. */
  settledWithoutVerdict(): void {
    this.probing = false;
  }

  /** When the current cool-down ends (ms since epoch); null when closed. */
  cooldownEndsAt(): number | null {
    return this.openedAt === null ? null : this.openedAt + this.cooldownMs;
  }

  consecutiveFailures(): number {
    return this.failures;
  }
}
