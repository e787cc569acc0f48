import {
  UNFINISHED_TASK_STATUSES,
  type H3Task,
  type OperatorTask,
  type Task,
} from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { releaseHold } from '../billing/ledger.js';
import { type LedgerEffects } from '../billing/journal.js';
import type { AuditWrite } from '../audit/audit-log.js';
import { ApiError, invalidInput } from '../errors/api-error.js';
import { parseInput, requiredAs, type Unparsed } from '../errors/input-schema.js';
import type { Database, TaskKind, TaskStatus } from '../store/schema.js';
import { CorruptTaskRow, type TaskFamilies } from './task-family.js';
import type { TaskRow, TaskStore } from './task-store.js';
import { TASK_MOVES } from './task-states.js';
import { expireTask } from './task-expiry.js';
import { deleteUndeliveredOutputs } from './task-kept-outputs.js';
import { taskResolutionSchema } from './task-stored-json.js';

const LIST_LIMIT = 100;
/** Every status: the keys of its transition table (task-states.ts). */
const STATUSES = Object.keys(TASK_MOVES) as [TaskStatus, ...TaskStatus[]];

/**
 * The operators' task list's filters, named as the query string names them (`account_id`).
 * The kinds are the families registered (`kind`: one of them).
 */
const taskFilter = (kinds: readonly string[]) =>
  z.object({
    status: z.enum(STATUSES, { error: `must be one of ${STATUSES.join(', ')}` }).optional(),
    kind: z
      .string({ error: `must be one of ${kinds.join(', ')}` })
      .refine((kind) => kinds.includes(kind), { error: `must be one of ${kinds.join(', ')}` })
      .optional(),
    account_id: z.string({ error: 'must be an id' }).optional(),
  });

const NOT_AN_ACTION = 'must be release or attach';
const NOT_A_REASON = 'is required (1-1000 characters)';

/**
 * An operator's resolution of a task. Whether `upstream_task_id` is given goes with the action
 * (attach names it, release does not): `resolve`'s rule, across the fields.
 */
const resolutionInput = z.object({
  action: requiredAs(NOT_AN_ACTION, z.enum(['release', 'attach'], { error: NOT_AN_ACTION })),
  reason: requiredAs(
    NOT_A_REASON,
    z
      .string({ error: NOT_A_REASON })
      .max(1_000, { error: NOT_A_REASON })
      .refine((reason) => reason.trim() !== '', { error: NOT_A_REASON }),
  ),
  upstream_task_id: z.unknown().optional(),
});

/** What an operator sees of a task: the caller's view plus whose it is and the worker's state. */
export function operatorTaskView(families: TaskFamilies, row: TaskRow): OperatorTask {
  return {
    ...viewOrBare(families, row),
    account_id: row.account_id,
    key_id: row.key_id,
    upstream: row.upstream,
    upstream_task_id: row.upstream_task_id,
    submission: row.submission,
    lease_owner: row.lease_owner,
    due_at: row.due_at === null ? null : new Date(row.due_at).toISOString(),
    leases_taken: row.attempts,
    ...(row.error_message === null ? {} : { note: row.error_message }),
  };
}

/**
 * The family's view, or, for a row whose stored JSON fails its schema (or whose kind no family
 * reads), the columns that need no parsing: an operator still sees and resolves a corrupt task
 * (its note says what failed), and one bad row never breaks the list.
 */
function viewOrBare(families: TaskFamilies, row: TaskRow): Task | H3Task {
  try {
    return families.of(row.kind).view(row);
  } catch (error) {
    if (!(error instanceof CorruptTaskRow)) throw error;
    // The wire type names the known families' objects; this one is `<kind>.task`, whatever it is.
    return {
      object: `${row.kind}.task`,
      id: row.id,
      model: row.model,
      status: row.status,
      request_id: row.request_id,
      created_at: new Date(row.created_at).toISOString(),
      quote: {
        quoted_amount: row.quoted_amount,
        price_version: row.price_version,
        currency: 'CNY_MICRO',
        line_items: [],
      },
      billing: {
        settlement_pending: row.billing_state === 'pending',
        price_version: row.price_version,
        reserved_amount: row.quoted_amount,
        settled_amount: row.settled_amount ?? 0,
        state: row.billing_state,
        currency: 'CNY_MICRO',
      },
      unreadable: error.message,
    } as unknown as Task;
  }
}

/**
 * Tasks for operators (admin API, CLI): list and show any account's, and resolve any unfinished
 * task (`queued`, `running`, `submission_unknown`), with a reason, once, recorded on the task
 * (`resolution`) and, for a release, in the ledger's journal with the hold's release:
 * - `release`: the task fails and its hold is released (nothing charged) — e.g. a job the
 *   upstream lost, or one it never ran; a task awaiting settlement (finished, never settled)
 *   expires at once instead, as at the end of its settlement window (outputs deleted);
 * - `attach`: the operator found it at the upstream — the task runs on with that upstream id,
 *   and the worker polls it like any other (it is never submitted again).
 * A task a worker holds loses its claim: the worker's fenced writes fail and change nothing.
 */
export class TaskOperations {
  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      tasks: TaskStore;
      families: TaskFamilies;
      effects: LedgerEffects;
    },
  ) {}

  async list(filter: { status?: unknown; accountId?: unknown; kind?: unknown }) {
    const {
      status,
      kind,
      account_id: accountId,
    } = parseInput(taskFilter(this.deps.families.kinds()), {
      status: filter.status,
      kind: filter.kind,
      account_id: filter.accountId,
    });
    let query = this.deps.db
      .selectFrom('tasks')
      .selectAll()
      .orderBy('created_at', 'desc')
      .limit(LIST_LIMIT);
    if (status !== undefined) query = query.where('status', '=', status);
    if (kind !== undefined) query = query.where('kind', '=', kind as TaskKind);
    if (accountId !== undefined) query = query.where('account_id', '=', accountId);
    return {
      object: 'list' as const,
      data: (await query.execute()).map((row) => operatorTaskView(this.deps.families, row)),
    };
  }

  async show(id: string) {
    const row = await this.deps.tasks.byId(id);
    if (row === undefined) throw new ApiError('TASK_NOT_FOUND', 'no such task');
    return operatorTaskView(this.deps.families, row);
  }

  async resolve(id: string, given: Unparsed<typeof resolutionInput>, audit?: AuditWrite) {
    const input = parseInput(resolutionInput, given);
    const upstreamTaskId = input.upstream_task_id;
    if (input.action === 'attach' && (typeof upstreamTaskId !== 'string' || upstreamTaskId === ''))
      throw invalidInput('upstream_task_id', 'attach names the task the upstream has');
    if (input.action === 'release' && upstreamTaskId !== undefined)
      throw invalidInput('upstream_task_id', 'a release names no upstream task');
    const row = await this.deps.tasks.byId(id);
    if (row === undefined) throw new ApiError('TASK_NOT_FOUND', 'no such task');
    if (input.action === 'attach' && !this.deps.families.of(row.kind).attachable)
      throw invalidInput(
        'action',
        `${row.kind} upstreams answer at once: there is nothing to attach; release it`,
      );
    if (input.action === 'attach' && row.submission === 'pending')
      throw invalidInput(
        'action',
        'this task was never sent: there is nothing to attach; release it',
      );
    // Attach names the upstream task of one whose id is unknown; it never swaps the id of a task
    // the upstream already acknowledged (that would poll, and bill, somebody else's job).
    if (input.action === 'attach' && row.upstream_task_id !== null)
      throw new ApiError(
        'SETTLEMENT_NOT_ALLOWED',
        `task ${id} already has the upstream task ${row.upstream_task_id}; there is nothing to attach (release it if the upstream lost it)`,
      );
    const now = this.deps.effects.clock.now();
    // Written through the schema it is read back with (task-stored-json.ts).
    const resolution = JSON.stringify(
      taskResolutionSchema.parse({
        action: input.action,
        reason: input.reason.trim(),
        by: 'operator',
        at: new Date(now).toISOString(),
        ...(input.action === 'attach' ? { upstream_task_id: upstreamTaskId } : {}),
      }),
    );
    // Whatever state the task is in, the move is guarded on it: a worker, a settle or another
    // operator that changed it meanwhile makes this a 409, never a double resolution.
    const from = row.status;
    // Finished but never settled (the caller's client does not settle): a release closes its
    // settlement window now, as its expiry would (task-expiry.ts), with the operator's reason.
    // Once: a task an operator already resolved (attached) is not released after it finished;
    // its window still closes on it.
    if (input.action === 'release' && row.billing_state === 'pending' && row.resolution === null) {
      const expired = await expireTask(this.deps, row, now, {
        reason: `operator: ${input.reason}`,
        resolution,
        audit,
      });
      if (!expired)
        throw new ApiError(
          'SETTLEMENT_NOT_ALLOWED',
          `task ${id} was settled or expired while it was being resolved; read it again`,
        );
      return this.show(id);
    }
    if (!UNFINISHED_TASK_STATUSES.includes(from))
      throw new ApiError(
        'SETTLEMENT_NOT_ALLOWED',
        `task ${id} is ${from} (billing ${row.billing_state}); an operator resolves only an unfinished task (queued, running, submission_unknown), or releases one awaiting settlement`,
      );
    const moved = await this.deps.db.transaction().execute(async (trx) => {
      if (input.action === 'attach') {
        const attached = await this.deps.tasks.move(
          trx,
          {
            id,
            now,
            status: { from, to: 'running' },
            submission: { from: row.submission, to: 'accepted' },
          },
          {
            resolution,
            upstream_task_id: String(upstreamTaskId),
            vanished_since: null,
            error_message: null,
            due_at: now,
            lease_owner: null,
            lease_until: null,
            claim_token: null,
          },
        );
        if (attached) await audit?.(trx);
        return attached;
      }
      const failed = await this.deps.tasks.move(
        trx,
        {
          id,
          now,
          status: { from, to: 'failed' },
          billing_state: { from: 'reserved', to: 'released' },
        },
        {
          resolution,
          error_code: 'NOT_RUN',
          error_message: 'an operator released the task: nothing was charged',
          pricing_rule: 'resolved by an operator: the hold is released',
          finished_at: now,
          due_at: null,
          lease_owner: null,
          lease_until: null,
          claim_token: null,
        },
      );
      // Outputs a worker stored before the task was released are never delivered.
      if (failed) await deleteUndeliveredOutputs(trx, id, now);
      if (failed)
        await releaseHold(trx, this.deps.effects, {
          holdId: row.hold_id,
          reason: `operator: ${input.reason}`,
        });
      if (failed) await audit?.(trx);
      return failed;
    });
    if (!moved)
      throw new ApiError(
        'SETTLEMENT_NOT_ALLOWED',
        `task ${id} changed while it was being resolved (it was ${from}); read it again`,
      );
    return this.show(id);
  }
}
