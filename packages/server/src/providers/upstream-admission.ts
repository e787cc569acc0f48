import { ApiError } from '../errors/api-error.js';
import type { CallerPresence } from './caller-presence.js';
import { UpstreamFailure } from './upstream-error.js';

export interface AdmissionSettings {
  /** Requests sent to the upstream at once (its connection pool size). */
  readonly capacity: number;
  /** Of those, the most one account may hold. */
  readonly perAccount: number;
  /** Longest wait in the queue; then the request fails, never sent. */
  readonly queueTimeoutMs: number;
}

interface Waiter {
  readonly accountId: string;
  readonly admit: (release: () => void) => void;
  readonly refuse: (failure: UpstreamFailure) => void;
}

/**
 * Fair admission to one upstream's connection pool. At most `capacity` requests are in flight,
 * at most `perAccount` of them for one account; requests beyond that wait in a queue of their
 * account, and a freed slot goes to the next account in turn (round robin over accounts, first
 * come first served within one), so one account with many slow requests delays only itself.
 *
 * Contract: a request refused here (queue timeout, caller gone) never reached the upstream:
 * its `UpstreamFailure` is `failed`, so its record is failed and its hold released. Every
 * admitted request must call its release exactly once (extra calls are ignored).
 */
export class UpstreamAdmission {
  private inFlight = 0;
  private readonly inFlightByAccount = new Map<string, number>();
  /** Waiting requests per account; the map's order is the turn order. */
  private readonly queues = new Map<string, Waiter[]>();

  constructor(private readonly settings: AdmissionSettings) {}

  /** Resolves with the release function once the request may be sent. */
  acquire(accountId: string, caller?: CallerPresence): Promise<() => void> {
    if (caller?.gone === true) return Promise.reject(callerGone());
    if (this.queues.size === 0 && this.hasRoomFor(accountId))
      return Promise.resolve(this.take(accountId));
    return new Promise((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        stopListening?.();
      };
      const waiter: Waiter = {
        accountId,
        admit: (release) => {
          settle();
          resolve(release);
        },
        refuse: (failure) => {
          settle();
          this.remove(waiter);
          reject(failure);
        },
      };
      const timer = setTimeout(
        () => waiter.refuse(queueTimedOut(this.settings.queueTimeoutMs)),
        this.settings.queueTimeoutMs,
      );
      // Listened to only now that the request waits (caller-presence.ts).
      const stopListening = caller?.whenGone(() => waiter.refuse(callerGone()));
      const queue = this.queues.get(accountId);
      if (queue === undefined) this.queues.set(accountId, [waiter]);
      else queue.push(waiter);
      // Others may be waiting only because of their own per-account cap: this one may still fit.
      this.admitWaiting();
    });
  }

  /** Requests in flight and waiting, for metrics and tests. */
  counts(): { inFlight: number; waiting: number } {
    let waiting = 0;
    for (const queue of this.queues.values()) waiting += queue.length;
    return { inFlight: this.inFlight, waiting };
  }

  private hasRoomFor(accountId: string): boolean {
    return (
      this.inFlight < this.settings.capacity &&
      (this.inFlightByAccount.get(accountId) ?? 0) < this.settings.perAccount
    );
  }

  private take(accountId: string): () => void {
    this.inFlight += 1;
    this.inFlightByAccount.set(accountId, (this.inFlightByAccount.get(accountId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight -= 1;
      const left = (this.inFlightByAccount.get(accountId) ?? 1) - 1;
      if (left <= 0) this.inFlightByAccount.delete(accountId);
      else this.inFlightByAccount.set(accountId, left);
      this.admitWaiting();
    };
  }

  /**
   * Gives free slots to waiting accounts in turn, one request per account per pass; an account
   * served goes to the back. Accounts at their own cap are skipped, so they never block others.
   */
  private admitWaiting(): void {
    let admitted = true;
    while (admitted && this.inFlight < this.settings.capacity) {
      admitted = false;
      for (const [accountId, queue] of [...this.queues]) {
        if (this.inFlight >= this.settings.capacity) return;
        if (!this.hasRoomFor(accountId)) continue;
        const waiter = queue.shift();
        this.queues.delete(accountId);
        if (queue.length > 0) this.queues.set(accountId, queue);
        if (waiter === undefined) continue;
        waiter.admit(this.take(accountId));
        admitted = true;
      }
    }
  }

  private remove(waiter: Waiter): void {
    const queue = this.queues.get(waiter.accountId);
    if (queue === undefined) return;
    const index = queue.indexOf(waiter);
    if (index >= 0) queue.splice(index, 1);
    if (queue.length === 0) this.queues.delete(waiter.accountId);
  }
}

function queueTimedOut(ms: number): UpstreamFailure {
  return new UpstreamFailure(
    'failed',
    new ApiError(
      'MODEL_UNAVAILABLE',
      `the model's upstream had no free connection within ${Math.ceil(ms / 1000)} s; nothing was sent or charged`,
    ),
    null,
    'queue: timed out before sending',
    null,
    'gateway',
  );
}

function callerGone(): UpstreamFailure {
  return new UpstreamFailure(
    'failed',
    new ApiError(
      'MODEL_UNAVAILABLE',
      'the caller went away while the request waited for an upstream connection; nothing was sent or charged',
    ),
    null,
    'queue: caller gone before sending',
    null,
    'gateway',
  );
}
