import type { Kysely } from 'kysely';
import type { TaskOperations } from '../tasks/task-operations.js';
import type { Clock } from '../util/effects.js';
import type { SettlementService } from '../requests/settlement-service.js';
import type { Database } from '../store/schema.js';

/** One side of the queue (records or tasks): how many, the money they hold, the oldest. */
export interface UnresolvedTotals {
  readonly count: number;
  /** Micro-yuan held by their open holds. */
  readonly held: number;
  /** When the oldest was created (ISO 8601); `null` when there is none. */
  readonly oldest_created_at: string | null;
  /** Its age in whole seconds at the time of reading; `null` when there is none. */
  readonly oldest_age_seconds: number | null;
}

export interface UnresolvedSummary {
  readonly requests: UnresolvedTotals;
  readonly tasks: UnresolvedTotals;
  /** Both together: what an operator (or an alert) watches. */
  readonly total: UnresolvedTotals;
}

interface Aggregate {
  count: string | number | bigint;
  held: string | number | bigint | null;
  oldest: string | number | bigint | null;
}

/**
 * The totals of everything whose outcome was never confirmed and still holds money: request
 * records and tasks in `submission_unknown` with an open hold — the operator's one queue
 * (`GET /admin/v1/unresolved`) and the `tollgate_submission_unknown_*` gauges. Two aggregate
 * reads of the shared database, exact to the micro-yuan (sums in the database, as integers).
 */
export async function unresolvedSummary(
  db: Kysely<Database>,
  now: number,
): Promise<UnresolvedSummary> {
  const [requests, tasks] = await Promise.all([
    db
      .selectFrom('requests')
      .innerJoin('holds', 'holds.id', 'requests.hold_id')
      .where('requests.status', '=', 'submission_unknown')
      .where('holds.state', '=', 'open')
      .select((eb) => [
        eb.fn.countAll().as('count'),
        eb.fn.sum('holds.amount').as('held'),
        eb.fn.min('requests.created_at').as('oldest'),
      ])
      .executeTakeFirstOrThrow() as Promise<Aggregate>,
    db
      .selectFrom('tasks')
      .innerJoin('holds', 'holds.id', 'tasks.hold_id')
      .where('tasks.status', '=', 'submission_unknown')
      .where('holds.state', '=', 'open')
      .select((eb) => [
        eb.fn.countAll().as('count'),
        eb.fn.sum('holds.amount').as('held'),
        eb.fn.min('tasks.created_at').as('oldest'),
      ])
      .executeTakeFirstOrThrow() as Promise<Aggregate>,
  ]);
  const requestTotals = totalsOf(requests, now);
  const taskTotals = totalsOf(tasks, now);
  const oldest = [requests.oldest, tasks.oldest]
    .filter((value) => value !== null)
    .map(Number)
    .reduce<number | null>(
      (least, value) => (least === null ? value : Math.min(least, value)),
      null,
    );
  return {
    requests: requestTotals,
    tasks: taskTotals,
    total: {
      count: requestTotals.count + taskTotals.count,
      held: requestTotals.held + taskTotals.held,
      ...oldestOf(oldest, now),
    },
  };
}

function totalsOf(aggregate: Aggregate, now: number): UnresolvedTotals {
  return {
    count: Number(aggregate.count),
    held: aggregate.held === null ? 0 : Number(aggregate.held),
    ...oldestOf(aggregate.oldest === null ? null : Number(aggregate.oldest), now),
  };
}

function oldestOf(
  oldest: number | null,
  now: number,
): Pick<UnresolvedTotals, 'oldest_created_at' | 'oldest_age_seconds'> {
  if (oldest === null) return { oldest_created_at: null, oldest_age_seconds: null };
  return {
    oldest_created_at: new Date(oldest).toISOString(),
    oldest_age_seconds: Math.max(0, Math.floor((now - oldest) / 1000)),
  };
}

/**
 * `GET /admin/v1/unresolved` (and the console's copy): the totals, and the records and tasks to
 * resolve (each list at most its listing's limit, as `GET /admin/v1/requests?status=` and
 * `GET /admin/v1/tasks` show them; the totals count all).
 */
export async function unresolvedQueue(deps: {
  readonly store: { readonly db: Kysely<Database> };
  readonly clock: Clock;
  readonly settlements: Pick<SettlementService, 'awaitingResolution'>;
  // The kernel's operations, not the services' bundle (http/deps.ts reaches every task family).
  readonly taskOperations: Pick<TaskOperations, 'list'>;
}) {
  const [summary, records, tasks] = await Promise.all([
    unresolvedSummary(deps.store.db, deps.clock.now()),
    deps.settlements.awaitingResolution(),
    deps.taskOperations.list({ status: 'submission_unknown' }),
  ]);
  return {
    object: 'unresolved' as const,
    total: summary.total,
    requests: { ...summary.requests, data: records },
    tasks: { ...summary.tasks, data: tasks.data },
  };
}
