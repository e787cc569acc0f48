import { sql, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { DialectName } from '../store/database.js';
import type {
  Database,
  TaskBillingState,
  TaskKind,
  TaskStatus,
  TaskSubmission,
  TaskTable,
} from '../store/schema.js';
import { canMoveColumn, type StateColumn } from './task-states.js';
import { databaseNowMs } from './database-clock.js';

export type TaskRow = Selectable<TaskTable>;

/** A task under a worker's claim: its `claim_token` fences every write of the step. */
export type LeasedTask = TaskRow & { readonly claim_token: string };

function checkMove<State extends string>(column: StateColumn, pair: StatePair<State>): void {
  if (!canMoveColumn(column, pair.from as never, pair.to as never))
    throw new ForbiddenTaskMove(`a task's ${column} may not move from ${pair.from} to ${pair.to}`);
}

function asLeased(row: TaskRow): LeasedTask {
  if (row.claim_token === null) throw new Error(`task ${row.id} was claimed without a token`);
  return { ...row, claim_token: row.claim_token };
}

/**
 * The claimable tasks to take, oldest due first, each account up to its remaining share
 * (`perAccount` less what it is `running` here), at most `limit` in all.
 */
function fairShare(
  candidates: readonly { id: string; account_id: string }[],
  input: { limit: number; running: ReadonlyMap<string, number>; perAccount: number },
): string[] {
  const taken = new Map<string, number>();
  const chosen: string[] = [];
  for (const candidate of candidates) {
    if (chosen.length >= input.limit) break;
    const already =
      (input.running.get(candidate.account_id) ?? 0) + (taken.get(candidate.account_id) ?? 0);
    if (already >= input.perAccount) continue;
    taken.set(candidate.account_id, (taken.get(candidate.account_id) ?? 0) + 1);
    chosen.push(candidate.id);
  }
  return chosen;
}

/**
 * Columns a move may write besides the three state columns (never the identity or the quote):
 * `status`, `submission` and `billing_state` change only through `TaskStore.move`, each by its
 * table in task-states.ts.
 */
export type TaskChanges = Omit<
  Updateable<TaskTable>,
  | 'id'
  | 'kind'
  | 'account_id'
  | 'key_id'
  | 'request_id'
  | 'status'
  | 'submission'
  | 'billing_state'
  | 'quoted_amount'
>;

/** One state column's expected value and the value it moves to (the same: only a guard). */
export interface StatePair<State> {
  readonly from: State;
  readonly to: State;
}

/** A guarded move of a task: each named state column from its expected value to the next. */
export interface TaskMove {
  readonly id: string;
  readonly now: number;
  /** A worker's claim token: the move happens only while that claim holds the task. */
  readonly claim?: string;
  readonly status?: StatePair<TaskStatus>;
  readonly submission?: StatePair<TaskSubmission>;
  readonly billing_state?: StatePair<TaskBillingState>;
  /** Only while no upstream id is recorded (a late answer never overwrites one). */
  readonly noUpstreamId?: true;
}

/** A move the table in task-states.ts does not allow: a bug, never a caller's mistake. */
export class ForbiddenTaskMove extends Error {
  override readonly name = 'ForbiddenTaskMove';
}

/**
 * Task rows. Every state change is `move`: a compare-and-set on the expected states
 * (and, for a worker, on its claim's fencing token), refused for moves task-states.ts does not
 * list. Workers take due tasks with `claimDue` (`FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite
 * serialises writers, so guarded updates are enough); leases are judged by the database's clock.
 */
export class TaskStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {}

  async insert(executor: Kysely<Database>, row: TaskTable): Promise<void> {
    await executor.insertInto('tasks').values(row).execute();
  }

  byId(id: string, executor: Kysely<Database> = this.db): Promise<TaskRow | undefined> {
    return executor.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The task if it is this key's and of this kind; else undefined (the caller's 404, identical for all). */
  async ownedBy(
    id: string,
    owner: { keyId: string; kind: TaskKind },
  ): Promise<TaskRow | undefined> {
    const row = await this.byId(id);
    return row !== undefined && row.key_id === owner.keyId && row.kind === owner.kind
      ? row
      : undefined;
  }

  /**
   * The one way a task's state columns change: a compare-and-set of every named column on its
   * expected value (and, for a worker's step, on its claim's fencing token, docs/tasks.md
   * "Claims"), refused with `ForbiddenTaskMove` for a move its table in task-states.ts does not
   * list. Returns whether it moved (false: the task was not as expected — another worker, a
   * settle or an operator changed it first).
   */
  async move(
    executor: Kysely<Database>,
    move: TaskMove,
    changes: TaskChanges = {},
  ): Promise<boolean> {
    const columns: Partial<Pick<TaskTable, 'status' | 'submission' | 'billing_state'>> = {};
    let query = executor.updateTable('tasks').where('id', '=', move.id);
    if (move.status !== undefined) {
      checkMove('status', move.status);
      columns.status = move.status.to;
      query = query.where('status', '=', move.status.from);
    }
    if (move.submission !== undefined) {
      checkMove('submission', move.submission);
      columns.submission = move.submission.to;
      query = query.where('submission', '=', move.submission.from);
    }
    if (move.billing_state !== undefined) {
      checkMove('billing_state', move.billing_state);
      columns.billing_state = move.billing_state.to;
      query = query.where('billing_state', '=', move.billing_state.from);
    }
    if (move.claim !== undefined) query = query.where('claim_token', '=', move.claim);
    if (move.noUpstreamId === true) query = query.where('upstream_task_id', 'is', null);
    const result = await query
      .set({ ...changes, ...columns, updated_at: move.now })
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  /**
   * Claims up to `limit` due tasks for `owner`: tasks whose `due_at` has come (by the instance's
   * clock: scheduling) and whose lease, if any, has run out (by the database's clock: safety).
   * Fair across accounts: an account already running `perAccount` steps here (`running`) gets
   * none, and the others get at most their remaining share, oldest due first. Each claimed row
   * carries a fresh `claim_token` and a lease of `leaseMs` from the database's now.
   */
  async claimDue(input: {
    owner: string;
    now: number;
    leaseMs: number;
    limit: number;
    running: ReadonlyMap<string, number>;
    perAccount: number;
    newToken: () => string;
  }): Promise<LeasedTask[]> {
    if (input.limit <= 0) return [];
    const full = [...input.running].flatMap(([account, count]) =>
      count >= input.perAccount ? [account] : [],
    );
    const pick = async (executor: Kysely<Database>) => {
      let due = executor
        .selectFrom('tasks')
        .select(['id', 'account_id'])
        .where('due_at', 'is not', null)
        .where('due_at', '<=', input.now)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', this.dbNow)]))
        .orderBy('due_at')
        // Room to skip over an account that has used its share and still fill the slots.
        .limit(input.limit * 4);
      if (full.length > 0) due = due.where('account_id', 'not in', full);
      const candidates = await (
        this.dialect === 'postgres' ? due.forUpdate().skipLocked() : due
      ).execute();
      const chosen = fairShare(candidates, input);
      const leased: LeasedTask[] = [];
      for (const id of chosen) {
        const row = await executor
          .updateTable('tasks')
          .set({
            lease_owner: input.owner,
            lease_until: sql<number>`${this.dbNow} + ${input.leaseMs}`,
            claim_token: input.newToken(),
            attempts: sql`attempts + 1`,
          })
          .where('id', '=', id)
          .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', this.dbNow)]))
          .returningAll()
          .executeTakeFirst();
        if (row !== undefined) leased.push(asLeased(row));
      }
      return leased;
    };
    // PostgreSQL: rows locked by another instance's claim are skipped, not waited for. SQLite
    // serialises writers, and every claim re-checks the lease in its own guarded update.
    return this.dialect === 'postgres' ? this.db.transaction().execute(pick) : pick(this.db);
  }

  /**
   * Claims one running task for a caller's refresh (H3 `?refresh=true`): only a task the
   * upstream accepted (`running`), not leased now (by the database's clock), and not refreshed
   * within `minIntervalMs` (on any instance). Returns the claimed row, or why it was not.
   */
  async claimForRefresh(input: {
    id: string;
    owner: string;
    now: number;
    leaseMs: number;
    minIntervalMs: number;
    newToken: () => string;
  }): Promise<
    | { leased: LeasedTask }
    | { refused: 'not_running' | 'leased' }
    | { refused: 'throttled'; retryAfterMs: number }
  > {
    const [leased] = await this.db
      .updateTable('tasks')
      .set({
        lease_owner: input.owner,
        lease_until: sql<number>`${this.dbNow} + ${input.leaseMs}`,
        claim_token: input.newToken(),
        refreshed_at: input.now,
        attempts: sql`attempts + 1`,
      })
      .where('id', '=', input.id)
      .where('status', '=', 'running')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', this.dbNow)]))
      .where((eb) =>
        eb.or([
          eb('refreshed_at', 'is', null),
          eb('refreshed_at', '<=', input.now - input.minIntervalMs),
        ]),
      )
      .returningAll()
      .execute();
    if (leased !== undefined) return { leased: asLeased(leased) };
    const row = await this.byId(input.id);
    if (row === undefined || row.status !== 'running') return { refused: 'not_running' };
    if (row.refreshed_at !== null && row.refreshed_at > input.now - input.minIntervalMs)
      return {
        refused: 'throttled',
        retryAfterMs: row.refreshed_at + input.minIntervalMs - input.now,
      };
    return { refused: 'leased' };
  }

  /**
   * Extends a claim by `leaseMs` from the database's now, while a step is in flight. Fenced:
   * a claim another worker has taken over is not renewed (returns false).
   */
  async renewLease(task: LeasedTask, leaseMs: number): Promise<boolean> {
    const result = await this.db
      .updateTable('tasks')
      .set({ lease_until: sql<number>`${this.dbNow} + ${leaseMs}` })
      .where('id', '=', task.id)
      .where('claim_token', '=', task.claim_token)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  /** How many tasks are in each status (every status listed, zeros included), for metrics. */
  async countByStatus(): Promise<Record<TaskStatus, number>> {
    const rows = await this.db
      .selectFrom('tasks')
      .select(['status', (eb) => eb.fn.countAll<string>().as('count')])
      .groupBy('status')
      .execute();
    const counts: Record<TaskStatus, number> = {
      queued: 0,
      running: 0,
      succeeded: 0,
      failed: 0,
      submission_unknown: 0,
    };
    for (const row of rows) counts[row.status] = Number(row.count);
    return counts;
  }

  /**
   * Gives a claim back, with when the task is next due (null: nothing to do until someone acts).
   * Fenced: a claim another worker has taken over is left alone.
   */
  async releaseLease(task: LeasedTask, next: { dueAt: number | null; now: number }): Promise<void> {
    await this.db
      .updateTable('tasks')
      .set({
        lease_owner: null,
        lease_until: null,
        claim_token: null,
        due_at: next.dueAt,
        updated_at: next.now,
      })
      .where('id', '=', task.id)
      .where('claim_token', '=', task.claim_token)
      .execute();
  }

  private get dbNow() {
    return databaseNowMs(this.dialect);
  }
}
