import type { Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { LedgerEffects } from '../billing/ledger.js';
import type { PriceBook } from '../billing/price-book.js';
import type { Metrics } from '../http/metrics.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { TaskProvider } from '../providers/task-provider.js';
import type { AssetStorage } from '../assets/local-storage.js';
import type { Database } from '../store/schema.js';
import { LostLease, runTaskStep, type TaskStepDeps } from './task-steps.js';
import type { TaskRow, TaskStore } from './task-store.js';

/** Where a test may stop a worker dead, as `kill -9` would (docs/tasks.md "Crashes"). */
export type WorkerStep = 'before_submit' | 'after_submit' | 'mid_poll' | 'mid_download';

/** Thrown by an injected fault: the worker drops the task as a dead process would, lease and all. */
export class WorkerKilled extends Error {
  override readonly name = 'WorkerKilled';
}

export interface WorkerOptions {
  /** This worker's name in leases (instance id). */
  readonly owner: string;
  /** How long a lease lasts; a worker that dies loses its tasks to another after this. */
  readonly leaseMs?: number;
  /** Tasks taken per tick. */
  readonly batch?: number;
  /** Time between ticks when idle. */
  readonly intervalMs?: number;
  /** Tests: throw `WorkerKilled` at a step to simulate a crash there. */
  readonly fault?: (step: WorkerStep, task: TaskRow) => void;
}

export interface TaskWorkerDeps {
  readonly db: Kysely<Database>;
  readonly tasks: TaskStore;
  readonly providers: ProviderRegistry;
  readonly prices: PriceBook;
  readonly storage: AssetStorage;
  readonly effects: LedgerEffects;
  readonly logger: FastifyBaseLogger;
  readonly metrics: Metrics;
  readonly maxVideoBytes: number;
}

/**
 * One per instance: leases due tasks (task-store.ts `claimDue`), runs one step of each
 * (task-steps.ts: submit once, look up, poll, store outputs, price), gives the lease back with
 * when the task is next due. Every step is safe to cut off anywhere: a lease that runs out
 * hands the task to another worker, and a step's state changes are guarded transitions, so a
 * submission is never sent twice and a hold is never resolved twice.
 */
export class TaskWorker {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<number> | undefined;
  private stopped = false;
  private readonly leaseMs: number;
  private readonly batch: number;

  constructor(
    private readonly deps: TaskWorkerDeps,
    private readonly options: WorkerOptions,
  ) {
    this.leaseMs = options.leaseMs ?? 60_000;
    this.batch = options.batch ?? 8;
  }

  start(): void {
    const interval = this.options.intervalMs ?? 250;
    const loop = () => {
      if (this.stopped) return;
      void this.tick()
        .catch((error: unknown) => {
          this.deps.logger.error({ err: error }, 'task worker tick failed');
          return 0;
        })
        .then((ran) => {
          // A full batch means more may be due: go on at once; otherwise wait a little.
          if (!this.stopped)
            this.timer = setTimeout(loop, ran >= this.batch ? 0 : interval).unref();
        });
    };
    this.timer = setTimeout(loop, 0).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.ticking?.catch(() => 0);
  }

  /** Leases due tasks and runs one step of each; resolves with how many it ran. */
  tick(): Promise<number> {
    this.ticking ??= this.runTick().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async runTick(): Promise<number> {
    const now = this.deps.effects.clock.now();
    const leased = await this.deps.tasks.claimDue({
      owner: this.options.owner,
      now,
      leaseMs: this.leaseMs,
      limit: this.batch,
    });
    for (const task of leased)
      this.deps.metrics.workerLag.observe(Math.max(0, now - (task.due_at ?? now)) / 1000);
    await Promise.all(leased.map((task) => this.runOne(task)));
    return leased.length;
  }

  /**
   * A caller's refresh of one accepted task (H3 `?refresh=true`): leases it (refused while a
   * worker holds it, or within `minIntervalMs` of the last refresh) and runs the same step a
   * worker would — a poll, never a submission. Resolves once the step is done.
   */
  async refresh(id: string, minIntervalMs: number) {
    const claimed = await this.deps.tasks.claimForRefresh({
      id,
      owner: this.options.owner,
      now: this.deps.effects.clock.now(),
      leaseMs: this.leaseMs,
      minIntervalMs,
    });
    if ('leased' in claimed) await this.runOne(claimed.leased);
    return claimed;
  }

  private async runOne(task: TaskRow): Promise<void> {
    const provider = this.deps.providers.tasks(task.upstream, task.kind, {
      accountId: task.account_id,
    });
    try {
      const next = await runTaskStep(this.stepDeps(provider), task);
      await this.deps.tasks.releaseLease(task.id, this.options.owner, {
        dueAt: next,
        now: this.deps.effects.clock.now(),
      });
    } catch (error) {
      // A killed worker leaves its lease to run out; anything else is logged and retried.
      if (error instanceof WorkerKilled) return;
      // Another worker holds the task now (this lease ran out): it carries on from the stored state.
      if (error instanceof LostLease) return;
      this.deps.logger.error({ err: error, taskId: task.id }, 'task step failed; retrying later');
      await this.deps.tasks.releaseLease(task.id, this.options.owner, {
        dueAt: this.deps.effects.clock.now() + 5_000,
        now: this.deps.effects.clock.now(),
      });
    }
  }

  private stepDeps(provider: TaskProvider): TaskStepDeps {
    return {
      ...this.deps,
      provider,
      owner: this.options.owner,
      fault: this.options.fault ?? (() => {}),
    };
  }
}
