import { SIMULATOR_LIMITS } from './limits.js';

/** Thrown when an Idempotency-Key comes back with a different request body (answered 409). */
export class IdempotencyConflict extends Error {
  override readonly name = 'IdempotencyConflict';
}

/** What every simulated job carries: its state is a function of the clock and these. */
export interface ClockedJob {
  readonly id: string;
  readonly createdAtMs: number;
  /** Milliseconds from creation to the finished state. */
  readonly durationMs: number;
  readonly idempotencyKey: string | undefined;
  /** SHA-256 of the request, to tell a replay from a different request under the same key. */
  readonly fingerprint: string;
}

/**
 * The simulator's asynchronous jobs (videos, H3), in memory and bounded: at most
 * `SIMULATOR_LIMITS.videoJobs`; when full, the oldest finished job is evicted (with its
 * idempotency key), and when none is finished `add` refuses (the route answers 429). No timer
 * runs per job: whether one is finished is read from the clock.
 */
export class ClockedJobs<Job extends ClockedJob> {
  private readonly jobs = new Map<string, Job>();
  private readonly byKey = new Map<string, string>();

  constructor(readonly now: () => number) {}

  /** Keeps `job`; false when the store is full of unfinished jobs (nothing kept). */
  add(job: Job): boolean {
    if (this.jobs.size >= SIMULATOR_LIMITS.videoJobs && !this.evictOneFinished()) return false;
    this.jobs.set(job.id, job);
    if (job.idempotencyKey !== undefined) this.byKey.set(job.idempotencyKey, job.id);
    return true;
  }

  get(id: string): Job | undefined {
    return this.jobs.get(id);
  }

  byIdempotencyKey(key: string): Job | undefined {
    const id = this.byKey.get(key);
    return id === undefined ? undefined : this.jobs.get(id);
  }

  /** The job created earlier under `key`; throws `IdempotencyConflict` if it was another request. */
  replay(key: string, fingerprint: string): Job | undefined {
    const job = this.byIdempotencyKey(key);
    if (job !== undefined && job.fingerprint !== fingerprint)
      throw new IdempotencyConflict('this Idempotency-Key was used with a different request body');
    return job;
  }

  /** The newest `limit` jobs, newest first (insertion order is creation order). */
  newest(limit: number): Job[] {
    return [...this.jobs.values()].slice(-limit).reverse();
  }

  finished(job: Job): boolean {
    return this.now() - job.createdAtMs >= job.durationMs;
  }

  /** Queued for the first fifth of a job's time, then running until it is finished. */
  queued(job: Job): boolean {
    return this.now() - job.createdAtMs < job.durationMs / 5;
  }

  private evictOneFinished(): boolean {
    for (const job of this.jobs.values()) {
      if (!this.finished(job)) continue;
      this.jobs.delete(job.id);
      if (job.idempotencyKey !== undefined) this.byKey.delete(job.idempotencyKey);
      return true;
    }
    return false;
  }
}
