import type { Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { AssetStorage } from '../assets/local-storage.js';
import type { LedgerEffects } from '../billing/journal.js';
import type { PriceBook } from '../billing/price-book.js';
import type { ProviderRegistry } from '../providers/registry.js';
import type { TaskProvider } from '../providers/task-provider.js';
import type { ChannelRouter } from '../routing/channel-router.js';
import type { Database, TaskStatus, TaskSubmission } from '../store/schema.js';
import { TaskNeedsOperator, type TaskFamilies } from './task-family.js';
import type { LeasedTask, StatePair, TaskChanges, TaskRow, TaskStore } from './task-store.js';

/**
 * What every piece of a task step shares, below them all: the worker's and a step's
 * dependencies, the errors that end a step (`LostLease`, `WorkerKilled`), the fenced move of a
 * claimed task, its price, and its move to `submission_unknown`. The kernel is a line: the
 * worker (task-worker.ts) runs the step runner (task-steps.ts), which calls the pieces
 * (task-channels, task-delivery, task-late-answer, task-not-received, task-outputs); each of
 * them imports this file and none imports the runner or the worker back.
 */

/** Where a test may stop a worker dead, as `kill -9` would (docs/tasks.md "Crashes"). */
export type WorkerStep = 'before_submit' | 'after_submit' | 'mid_poll' | 'mid_download';

/** Thrown by an injected fault: the worker drops the task as a dead process would, lease and all. */
export class WorkerKilled extends Error {
  override readonly name = 'WorkerKilled';
}

/**
 * What the kernel counts (`tollgate_task_*`, docs/operations.md): the app's Prometheus registry
 * (http/metrics.ts `Metrics`) is one; the kernel names only the instruments it moves.
 */
export interface TaskMetrics {
  readonly taskTransitions: { inc(labels: { to: string }): void };
  readonly taskSubmissions: { inc(): void };
  readonly taskLateAnswers: { inc(labels: { outcome: string }): void };
  readonly taskStoppedForOperator: { inc(): void };
  /** Seconds from a task's due time to a worker taking it. */
  readonly workerLag: { observe(seconds: number): void };
}

export interface TaskWorkerDeps {
  readonly db: Kysely<Database>;
  readonly tasks: TaskStore;
  readonly providers: ProviderRegistry;
  /** The task families by kind (task-family.ts): all the kernel knows of a task's kind. */
  readonly families: TaskFamilies;
  readonly prices: PriceBook;
  readonly storage: AssetStorage;
  readonly effects: LedgerEffects;
  readonly logger: FastifyBaseLogger;
  readonly metrics: TaskMetrics;
  readonly maxVideoBytes: number;
  /** Picks the channel a task is submitted on, with failover (tasks/task-channels.ts). */
  readonly channels: ChannelRouter;
}

/** What a step needs: the worker's dependencies, with the task's provider instead of the registry. */
export type TaskStepDeps = Omit<TaskWorkerDeps, 'providers'> & {
  /** The provider of the row's upstream. */
  readonly provider: TaskProvider;
  /** The task's provider on another upstream (a submission that moved to another channel). */
  readonly providerOn: (upstream: string) => TaskProvider;
  readonly owner: string;
  /** Aborted when the instance stops and the step outlasts the grace (task-worker.ts `stop`). */
  readonly signal: AbortSignal;
  /** How long polls may answer "no such job" before the task goes to the operator queue. */
  readonly vanishedAfterMs: number;
  /** How long an upstream's look-up may answer "no such job" before it is believed (task-not-received.ts). */
  readonly notReceivedAfterMs: (upstream: string) => number;
  /** How long a priced task awaits settlement before it expires (task-expiry.ts). */
  readonly settlementWindowMs: number;
  readonly fault: (step: WorkerStep, task: TaskRow) => void;
};

/** The worker lost the task to another (its lease ran out): drop this step, change nothing. */
export class LostLease extends Error {
  override readonly name = 'LostLease';
}

/** Tries in a row to store a finished task's outputs before it goes to an operator. */
export const MAX_DOWNLOAD_TRIES = 5;
/** Poll delays: quick at first, then at most every 30 s. */
export const pollDelayMs = (attempts: number) => Math.min(30_000, 500 * 2 ** Math.min(attempts, 6));
/** Look-ups of an unanswered submission: every minute at most (the upstream may still be writing it). */
export const lookupDelayMs = (attempts: number) =>
  Math.min(60_000, 2_000 * 2 ** Math.min(attempts, 5));

/** A fenced move of this claim's task (its status, and its submission when named). */
export async function move(
  deps: TaskStepDeps,
  task: LeasedTask,
  status: StatePair<TaskStatus>,
  changes: TaskChanges,
  submission?: StatePair<TaskSubmission>,
): Promise<void> {
  const now = deps.effects.clock.now();
  const moved = await deps.tasks.move(
    deps.db,
    {
      id: task.id,
      now,
      claim: task.claim_token,
      status,
      ...(submission === undefined ? {} : { submission }),
    },
    changes,
  );
  if (!moved) throw new LostLease(task.id);
  if (status.from !== status.to) deps.metrics.taskTransitions.inc({ to: status.to });
}

/** The task's own price version; one that is gone stops the task for an operator. */
export async function priceOf(deps: TaskStepDeps, task: TaskRow) {
  const price = await deps.prices.byVersion(task.price_version);
  if (price === undefined)
    throw new TaskNeedsOperator(
      `task ${task.id}: its price version ${task.price_version} is not in the store; it cannot be priced`,
    );
  return price;
}

export async function markUnknown(
  deps: TaskStepDeps,
  task: LeasedTask,
  from: 'queued' | 'running',
  why: string,
  extra: TaskChanges = {},
  lookUpLater = true,
): Promise<number | null> {
  // The submission stays as it is: `sending` (queued), `accepted` (running: its id is kept).
  await move(
    deps,
    task,
    { from, to: 'submission_unknown' },
    {
      ...extra,
      error_message: `${why}; the task keeps its hold, is never submitted again, and is looked up or resolved by an operator`,
    },
  );
  return !lookUpLater || deps.provider.lookup === undefined
    ? null
    : deps.effects.clock.now() + lookupDelayMs(0);
}
