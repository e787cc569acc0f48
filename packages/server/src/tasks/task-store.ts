import { sql, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { DialectName } from '../store/database.js';
import type { Database, TaskKind, TaskStatus, TaskTable } from '../store/schema.js';
import { canMove } from './task-states.js';

export type TaskRow = Selectable<TaskTable>;

/** Columns a transition may write besides the status (never the identity or the quote). */
export type TaskChanges = Omit<
  Updateable<TaskTable>,
  'id' | 'kind' | 'account_id' | 'key_id' | 'request_id' | 'status' | 'quoted_amount'
>;

/** A move the table in task-states.ts does not allow: a bug, never a caller's mistake. */
export class ForbiddenTaskMove extends Error {
  override readonly name = 'ForbiddenTaskMove';
}

/**
 * Task rows. Every status change is `transition`: a compare-and-set on the expected status
 * (and, for a worker, on its lease), refused for moves task-states.ts does not list. Workers
 * take due tasks with `claimDue` (leases: `FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite
 * serialises writers, so one guarded update is enough).
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
   * Moves `id` from `from` to `to` with `changes`, only if it is still in `from` (and still
   * leased by `leaseOwner` when given). Returns whether it moved.
   */
  async transition(
    executor: Kysely<Database>,
    move: { id: string; from: TaskStatus; to: TaskStatus; leaseOwner?: string; now: number },
    changes: TaskChanges = {},
  ): Promise<boolean> {
    if (move.from !== move.to && !canMove(move.from, move.to))
      throw new ForbiddenTaskMove(`a task may not move from ${move.from} to ${move.to}`);
    let query = executor
      .updateTable('tasks')
      .set({ ...changes, status: move.to, updated_at: move.now })
      .where('id', '=', move.id)
      .where('status', '=', move.from);
    if (move.leaseOwner !== undefined) query = query.where('lease_owner', '=', move.leaseOwner);
    const result = await query.executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  /**
   * Leases up to `limit` due tasks to `owner` until `now + leaseMs`: tasks whose `due_at` has
   * come and whose lease (if any) has run out. Returns the leased rows.
   */
  async claimDue(input: {
    owner: string;
    now: number;
    leaseMs: number;
    limit: number;
  }): Promise<TaskRow[]> {
    const due = this.db
      .selectFrom('tasks')
      .select('id')
      .where('due_at', 'is not', null)
      .where('due_at', '<=', input.now)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', input.now)]))
      .orderBy('due_at')
      .limit(input.limit);
    const lockedDue = this.dialect === 'postgres' ? due.forUpdate().skipLocked() : due;
    return this.db
      .updateTable('tasks')
      .set({
        lease_owner: input.owner,
        lease_until: input.now + input.leaseMs,
        attempts: sql`attempts + 1`,
      })
      .where('id', 'in', lockedDue)
      .returningAll()
      .execute();
  }

  /**
   * Leases one running task to `owner` for a caller's refresh (H3 `?refresh=true`): only a task
   * the upstream accepted (`running`), not leased by a worker now, and not refreshed within
   * `minIntervalMs` (on any instance). Returns the leased row, or why it was not leased.
   */
  async claimForRefresh(input: {
    id: string;
    owner: string;
    now: number;
    leaseMs: number;
    minIntervalMs: number;
  }): Promise<
    | { leased: TaskRow }
    | { refused: 'not_running' | 'leased' }
    | { refused: 'throttled'; retryAfterMs: number }
  > {
    const [leased] = await this.db
      .updateTable('tasks')
      .set({
        lease_owner: input.owner,
        lease_until: input.now + input.leaseMs,
        refreshed_at: input.now,
        attempts: sql`attempts + 1`,
      })
      .where('id', '=', input.id)
      .where('status', '=', 'running')
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', input.now)]))
      .where((eb) =>
        eb.or([
          eb('refreshed_at', 'is', null),
          eb('refreshed_at', '<=', input.now - input.minIntervalMs),
        ]),
      )
      .returningAll()
      .execute();
    if (leased !== undefined) return { leased };
    const row = await this.byId(input.id);
    if (row === undefined || row.status !== 'running') return { refused: 'not_running' };
    if (row.refreshed_at !== null && row.refreshed_at > input.now - input.minIntervalMs)
      return {
        refused: 'throttled',
        retryAfterMs: row.refreshed_at + input.minIntervalMs - input.now,
      };
    return { refused: 'leased' };
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

  /** Gives a lease back, with when the task is next due (null: nothing to do until someone acts). */
  async releaseLease(
    id: string,
    owner: string,
    next: { dueAt: number | null; now: number },
  ): Promise<void> {
    await this.db
      .updateTable('tasks')
      .set({ lease_owner: null, lease_until: null, due_at: next.dueAt, updated_at: next.now })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .execute();
  }

  /** Writes columns under a lease without changing the status (e.g. `submission: 'sending'`). */
  async updateLeased(
    id: string,
    guard: { owner: string; status: TaskStatus; now: number },
    changes: TaskChanges,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('tasks')
      .set({ ...changes, updated_at: guard.now })
      .where('id', '=', id)
      .where('status', '=', guard.status)
      .where('lease_owner', '=', guard.owner)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }
}
