import type { AccountTask } from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import { invalidInput } from '../../errors/api-error.js';
import type { Database, TaskBillingState, TaskKind, TaskStatus } from '../../store/schema.js';
import type { TaskFamilies } from '../../tasks/task-family.js';
import { BILLING_MOVES, TASK_MOVES } from '../../tasks/task-states.js';
import { taskNotFound } from '../../tasks/task-reads.js';
import type { TaskRow } from '../../tasks/task-store.js';

const LIST_LIMIT = 100;
/** Every status and billing state: the keys of their transition tables (tasks/task-states.ts). */
const STATUSES = Object.keys(TASK_MOVES) as TaskStatus[];
const BILLING_STATES = Object.keys(BILLING_MOVES) as TaskBillingState[];

/** What the account's owner sees of a task: the creating key's view, and which key made it. */
export function ownerTaskView(families: TaskFamilies, row: TaskRow): AccountTask {
  return { ...families.of(row.kind).view(row), key_id: row.key_id };
}

export interface AccountTaskFilter {
  readonly kind?: unknown;
  readonly status?: unknown;
  readonly billingState?: unknown;
}

/**
 * The tasks of every key of one account, for the console's owner (docs/console.md): bounded to
 * the account in SQL, never reachable by an API key (each key still reads only its own tasks
 * through `/v1`). Another account's task is the 404 of a missing one.
 */
export class AccountTasks {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly families: TaskFamilies,
  ) {}

  async list(
    accountId: string,
    filter: AccountTaskFilter,
  ): Promise<{ object: 'list'; data: AccountTask[] }> {
    let query = this.db
      .selectFrom('tasks')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(LIST_LIMIT);
    const kind = oneOf(filter.kind, this.families.kinds() as TaskKind[], 'kind');
    if (kind !== undefined) query = query.where('kind', '=', kind);
    const status = oneOf(filter.status, STATUSES, 'status');
    if (status !== undefined) query = query.where('status', '=', status);
    const billing = oneOf(filter.billingState, BILLING_STATES, 'billing_state');
    if (billing !== undefined) query = query.where('billing_state', '=', billing);
    return {
      object: 'list' as const,
      data: (await query.execute()).map((row) => ownerTaskView(this.families, row)),
    };
  }

  /** The account's task (any key's), or the 404 of a missing one. */
  async get(accountId: string, id: string): Promise<TaskRow> {
    const row = await this.db
      .selectFrom('tasks')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (row === undefined) throw taskNotFound();
    return row;
  }
}

function oneOf<Value extends string>(
  given: unknown,
  allowed: readonly Value[],
  field: string,
): Value | undefined {
  if (given === undefined) return undefined;
  if (!allowed.includes(given as Value))
    throw invalidInput(field, `must be one of ${allowed.join(', ')}`);
  return given as Value;
}
