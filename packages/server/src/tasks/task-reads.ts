import type { Kysely } from 'kysely';
import type { Principal } from '../auth/key-service.js';
import { ApiError } from '../errors/api-error.js';
import type { Database, TaskKind } from '../store/schema.js';
import type { TaskFamilies } from './task-family.js';
import type { TaskRow, TaskStore } from './task-store.js';

/** The 404 of a task that does not exist or is not this key's (identical for both). */
export const taskNotFound = () => new ApiError('TASK_NOT_FOUND', 'no such task');

/**
 * Reads of a task by its creating key, for every family alike: the row (any other key gets the
 * 404 of a missing id), its view, and its delivered file for the content routes.
 */
export class TaskReads {
  constructor(
    private readonly deps: { db: Kysely<Database>; tasks: TaskStore; families: TaskFamilies },
  ) {}

  async owned(principal: Principal, kind: TaskKind, id: string): Promise<TaskRow> {
    const row = await this.deps.tasks.ownedBy(id, { keyId: principal.keyId, kind });
    if (row === undefined) throw taskNotFound();
    return row;
  }

  /** The task as its family shows it to its creating key. */
  async view(principal: Principal, kind: TaskKind, id: string) {
    return this.deps.families.of(kind).view(await this.owned(principal, kind, id));
  }

  /**
   * The stored output of a delivered task, for its content route: before settlement 409
   * `CONTENT_NOT_DELIVERED` (the task awaits settlement), another key's task the 404 of a
   * missing id.
   */
  async deliveredOutput(principal: Principal, kind: TaskKind, id: string) {
    const task = await this.owned(principal, kind, id);
    // An expired task's outputs were deleted: gone, as a deleted asset is.
    if (task.billing_state === 'expired')
      throw new ApiError(
        'NOT_FOUND',
        `task ${id} expired unsettled (billing state expired): its outputs were deleted`,
      );
    if (task.billing_state !== 'settled')
      throw new ApiError(
        'CONTENT_NOT_DELIVERED',
        task.billing_state === 'pending'
          ? `task ${id} awaits settlement: settle it (POST ${this.deps.families.of(kind).path(id)}/settle), then read its content`
          : `task ${id} has no delivered content (status ${task.status})`,
      );
    const asset = await this.deps.db
      .selectFrom('assets')
      .selectAll()
      .where('task_id', '=', id)
      .where('deleted_at', 'is', null)
      .where('delivered_at', 'is not', null)
      .orderBy('id')
      .executeTakeFirst();
    if (asset === undefined)
      throw new ApiError(
        'CONTENT_NOT_DELIVERED',
        `task ${id} has no file to read: it was deleted, or the task answers text (an H3 understand: read its text from the task)`,
      );
    return asset;
  }
}
