import { DEFAULT_SETTLEMENT_WINDOW_MS } from '../config/task-engine-schema.js';
import type { TaskProvider } from '../providers/task-provider.js';
import {
  LostLease,
  WorkerKilled,
  type TaskStepDeps,
  type TaskWorkerDeps,
  type WorkerStep,
} from './task-step-kit.js';
import { runTaskStep } from './task-steps.js';
import type { LeasedTask, TaskRow } from './task-store.js';

// Named here too, where the worker's users have always found them.
export { WorkerKilled, type TaskWorkerDeps, type WorkerStep } from './task-step-kit.js';

export interface WorkerOptions {
  /** This worker's name in leases (instance id); claims themselves are told apart by token. */
  readonly owner: string;
  /** How long a claim lasts unless renewed; a worker that dies loses its tasks after this. */
  readonly leaseMs?: number;
  /** Steps run at once by this instance. */
  readonly concurrency?: number;
  /** Steps one account may have at once here (at most `concurrency`). */
  readonly perAccount?: number;
  /** Time between claims when idle or full. */
  readonly intervalMs?: number;
  /** How long polls may answer "no such job" before the task goes to the operator queue. */
  readonly vanishedAfterMs?: number;
  /** How long a priced task awaits settlement before it expires (default 7 days). */
  readonly settlementWindowMs?: number;
  /** How long `stop` lets steps in flight finish before aborting their upstream calls. */
  readonly stopGraceMs?: number;
  /** Tests: throw `WorkerKilled` at a step to simulate a crash there. */
  readonly fault?: (step: WorkerStep, task: TaskRow) => void;
  /** Tests: throw to skip a renewal, as a stalled worker whose renewals never arrive. */
  readonly renewalFault?: (task: TaskRow) => void;
}

interface InFlight {
  readonly accountId: string;
  readonly abort: AbortController;
  readonly done: Promise<void>;
}

/**
 * One per instance: claims due tasks (task-store.ts `claimDue`) and runs one step of each
 * (task-steps.ts: submit once, look up, poll, store outputs, price), each independently of the
 * others, at most `concurrency` at once and at most `perAccount` of one account: a step that
 * hangs on its upstream holds only its own slot, never another account's tasks. A claim is
 * renewed while its step is in flight and given back with when the task is next due. Every step
 * is safe to cut off anywhere: its writes are fenced by its claim's token, and its state changes
 * are guarded transitions, so a submission is never sent twice and a hold never resolved twice.
 */
export class TaskWorker {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Claims are made one at a time, so the free slots are counted right. */
  private claiming: Promise<unknown> = Promise.resolve();
  private readonly inFlight = new Map<string, InFlight>();
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private readonly perAccount: number;

  constructor(
    private readonly deps: TaskWorkerDeps,
    private readonly options: WorkerOptions,
  ) {
    this.leaseMs = options.leaseMs ?? 60_000;
    this.concurrency = options.concurrency ?? 16;
    this.perAccount = Math.min(
      this.concurrency,
      options.perAccount ?? Math.max(1, Math.floor(this.concurrency / 4)),
    );
  }

  start(): void {
    const interval = this.options.intervalMs ?? 250;
    const loop = async () => {
      if (this.stopped) return;
      let started = 0;
      try {
        started = (await this.launch()).length;
      } catch (error) {
        this.deps.logger.error({ err: error }, 'task worker claim failed');
      }
      // Steps run on without being awaited here. Claimed some and room is left: more may be due,
      // claim again at once; otherwise wait a little.
      if (!this.stopped) {
        const again = started > 0 && this.inFlight.size < this.concurrency;
        this.timer = setTimeout(() => void loop(), again ? 0 : interval).unref();
      }
    };
    this.timer = setTimeout(() => void loop(), 0).unref();
  }

  /**
   * Stops claiming, lets the steps in flight finish for `stopGraceMs`, then aborts the upstream
   * calls of those still running (a submission cut off this way is `submission_unknown`, as
   * after a crash) and waits for them to write their outcome.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.claiming.catch(() => undefined);
    const running = [...this.inFlight.values()];
    if (running.length === 0) return;
    const all = Promise.all(running.map((step) => step.done));
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([
      all,
      new Promise((resolve) => (grace = setTimeout(resolve, this.options.stopGraceMs ?? 10_000))),
    ]);
    clearTimeout(grace);
    for (const step of this.inFlight.values()) step.abort.abort();
    await all;
  }

  /**
   * Claims the due tasks there is room for and runs one step of each; resolves with how many
   * it ran once those steps are done (tests and callers that must see the step's effect).
   */
  async tick(): Promise<number> {
    const started = await this.launch();
    await Promise.all(started.map((step) => step.done));
    return started.length;
  }

  /**
   * A caller's refresh of one accepted task (H3 `?refresh=true`): claims it (refused while a
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
      newToken: () => this.deps.effects.ids.next('claim'),
    });
    if ('leased' in claimed) await this.run(claimed.leased).done;
    return claimed;
  }

  /** Claims as many due tasks as there are free slots (fairly across accounts) and starts them. */
  private launch(): Promise<InFlight[]> {
    const claimed = this.claiming.then(async () => {
      const free = this.concurrency - this.inFlight.size;
      if (this.stopped || free <= 0) return [];
      const now = this.deps.effects.clock.now();
      const leased = await this.deps.tasks.claimDue({
        owner: this.options.owner,
        now,
        leaseMs: this.leaseMs,
        limit: free,
        running: this.runningByAccount(),
        perAccount: this.perAccount,
        newToken: () => this.deps.effects.ids.next('claim'),
      });
      for (const task of leased)
        this.deps.metrics.workerLag.observe(Math.max(0, now - (task.due_at ?? now)) / 1000);
      return leased.map((task) => this.run(task));
    });
    this.claiming = claimed.catch(() => undefined);
    return claimed;
  }

  private runningByAccount(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const step of this.inFlight.values())
      counts.set(step.accountId, (counts.get(step.accountId) ?? 0) + 1);
    return counts;
  }

  /** Starts one step in its own slot; the slot is freed when it ends, whatever the outcome. */
  private run(task: LeasedTask): InFlight {
    const abort = new AbortController();
    // Keyed by claim: a task this instance lost and claimed again is two steps until the first ends.
    const done = this.runOne(task, abort.signal).finally(() =>
      this.inFlight.delete(task.claim_token),
    );
    const step = { accountId: task.account_id, abort, done };
    this.inFlight.set(task.claim_token, step);
    return step;
  }

  /** One step, its failure contained: it never rejects, whatever happens inside. */
  private async runOne(task: LeasedTask, signal: AbortSignal): Promise<void> {
    const stopRenewing = this.keepRenewed(task);
    try {
      // Resolved on first use, inside the step: a kind no family reads stops the task for an
      // operator there, like any other bad row.
      let provider: TaskProvider | undefined;
      const on = (upstream: string) =>
        this.deps.families
          .of(task.kind)
          .provider(this.deps.providers, upstream, { accountId: task.account_id });
      const resolve = () => (provider ??= on(task.upstream));
      const next = await runTaskStep(this.stepDeps(resolve, on, signal), task);
      await this.deps.tasks.releaseLease(task, {
        dueAt: next,
        now: this.deps.effects.clock.now(),
      });
    } catch (error) {
      // A killed worker leaves its lease to run out (and renews it no more).
      if (error instanceof WorkerKilled) return;
      // Another worker holds the task now (this claim was lost): it carries on from the stored state.
      if (error instanceof LostLease) return;
      // With the upstream id the row had: a step's answer not recorded is never logged nameless
      // (an answer to a submission is logged, with its id, by task-late-answer.ts).
      this.deps.logger.error(
        { err: error, taskId: task.id, upstreamTaskId: task.upstream_task_id },
        'task step failed; retrying later',
      );
      await this.deps.tasks
        .releaseLease(task, {
          dueAt: this.deps.effects.clock.now() + 5_000,
          now: this.deps.effects.clock.now(),
        })
        .catch((releaseError: unknown) =>
          this.deps.logger.error(
            { err: releaseError, taskId: task.id },
            'task lease not given back; it runs out by itself',
          ),
        );
    } finally {
      stopRenewing();
    }
  }

  /**
   * Renews the claim every third of the lease while the step runs (an upstream call or a
   * download may outlast one lease). A renewal that fails or finds the claim taken over changes
   * nothing: the step's fenced writes then fail, and a late upstream answer is kept on its own
   * guarded path (task-steps.ts).
   */
  private keepRenewed(task: LeasedTask): () => void {
    const timer = setInterval(
      () => {
        try {
          this.options.renewalFault?.(task);
        } catch {
          return;
        }
        this.deps.tasks.renewLease(task, this.leaseMs).then(
          (renewed) => {
            if (!renewed) clearInterval(timer);
          },
          (error: unknown) =>
            this.deps.logger.warn({ err: error, taskId: task.id }, 'task lease renewal failed'),
        );
      },
      Math.max(1, Math.floor(this.leaseMs / 3)),
    );
    timer.unref();
    return () => clearInterval(timer);
  }

  private stepDeps(
    provider: () => TaskProvider,
    providerOn: (upstream: string) => TaskProvider,
    signal: AbortSignal,
  ): TaskStepDeps {
    return {
      ...this.deps,
      get provider() {
        return provider();
      },
      providerOn,
      owner: this.options.owner,
      signal,
      vanishedAfterMs: this.options.vanishedAfterMs ?? 600_000,
      notReceivedAfterMs: (upstream) => this.deps.providers.notReceivedAfterMs(upstream),
      settlementWindowMs: this.options.settlementWindowMs ?? DEFAULT_SETTLEMENT_WINDOW_MS,
      fault: this.options.fault ?? (() => {}),
    };
  }
}
