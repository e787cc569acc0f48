import type { Kysely } from 'kysely';
import { z } from 'zod';
import { invalidInput } from '../errors/api-error.js';
import { parseInput, type Unparsed } from '../errors/input-schema.js';
import type { AuditActorKind, AuditEventTable, Database } from '../store/schema.js';
import { parseStoredJson } from '../store/stored-json.js';
import type { Clock, IdGenerator } from '../util/effects.js';
import { listPage, parseLimit, type ListPage } from '../util/list-page.js';

/** Who acted, as the route that took the action knows it. */
export interface AuditActor {
  readonly kind: AuditActorKind;
  /** The console user's id; absent for the admin token. */
  readonly id?: string;
  readonly email?: string;
  readonly address?: string;
}

/**
 * `audit_events.detail`: a JSON object with the action's other inputs (never a secret), as the
 * action gave it; the column is null when it gave none.
 */
const auditDetailSchema = z.record(z.string(), z.unknown());
export type AuditDetail = z.output<typeof auditDetailSchema>;

/** What was done; `amount` only when money moved (positive micro-yuan). */
export interface AuditAction {
  readonly action: string;
  readonly targetId?: string | null;
  readonly accountId?: string | null;
  readonly amount?: number | null;
  readonly reason?: string | null;
  readonly detail?: AuditDetail;
}

/**
 * Writes the audit row inside a transaction a service already runs: a money-moving service
 * calls it with its own transaction and the amount it moved, so the movement and its row commit
 * or roll back together and the row says what the service (not the caller) moved.
 */
export type AuditWrite = (trx: Kysely<Database>, movedAmount?: number) => Promise<void>;

export interface AuditEventView {
  object: 'audit_event';
  id: string;
  created_at: string;
  actor: { kind: AuditActorKind; id: string | null; email: string | null; address: string | null };
  action: string;
  target_id: string | null;
  account_id: string | null;
  amount: number | null;
  reason: string | null;
  detail: AuditDetail | null;
}

export function auditEventView(row: AuditEventTable): AuditEventView {
  return {
    object: 'audit_event',
    id: row.id,
    created_at: new Date(row.created_at).toISOString(),
    actor: {
      kind: row.actor_kind,
      id: row.actor_id,
      email: row.actor_email,
      address: row.address,
    },
    action: row.action,
    target_id: row.target_id,
    account_id: row.account_id,
    amount: row.amount,
    reason: row.reason,
    detail:
      row.detail === null
        ? null
        : parseStoredJson(auditDetailSchema, row.detail, {
            table: 'audit_events',
            column: 'detail',
            id: row.id,
          }),
  };
}

const MAX_FILTER_LENGTH = 200;
const NOT_A_FILTER = `must be a string of 1 to ${MAX_FILTER_LENGTH} characters`;
const filterText = z
  .string({ error: NOT_A_FILTER })
  .min(1, { error: NOT_A_FILTER })
  .max(MAX_FILTER_LENGTH, { error: NOT_A_FILTER });

/**
 * The audit log's filters; `after` names an event of the log (`list` looks it up), and the page
 * size is the listing's own (`parseLimit`).
 */
const auditFilter = z.object({
  account_id: filterText.optional(),
  action: filterText.optional(),
  after: filterText.optional(),
});

/** What an operator may filter the audit log by, each field as it came (query string). */
export type AuditQuery = Unparsed<typeof auditFilter> & { readonly limit?: unknown };

/**
 * The audit log (docs/audit.md): who did what, when and why, through the admin API or the
 * console. `record` writes a row on its own (actions that move no money); `within` gives the
 * writer a money-moving service runs in its transaction. `list` pages newest first.
 */
export class AuditLog {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly effects: { readonly clock: Clock; readonly ids: IdGenerator },
  ) {}

  within(actor: AuditActor, action: AuditAction): AuditWrite {
    return async (trx, movedAmount) => {
      const row = this.row(actor, action);
      await trx
        .insertInto('audit_events')
        .values({ ...row, amount: movedAmount ?? row.amount })
        .execute();
    };
  }

  async record(actor: AuditActor, action: AuditAction): Promise<void> {
    await this.within(actor, action)(this.db);
  }

  async list(query: AuditQuery): Promise<ListPage<AuditEventView>> {
    const { account_id: accountId, action, after } = parseInput(auditFilter, query);
    const limit = parseLimit(query.limit, 50);
    let select = this.db.selectFrom('audit_events').selectAll();
    if (accountId !== undefined) select = select.where('account_id', '=', accountId);
    if (action !== undefined) select = select.where('action', '=', action);
    if (after !== undefined) {
      const cursor = await this.db
        .selectFrom('audit_events')
        .select(['created_at', 'id'])
        .where('id', '=', after)
        .executeTakeFirst();
      if (cursor === undefined) throw invalidInput('after', 'is not an audit event id');
      select = select.where((eb) =>
        eb.or([
          eb('created_at', '<', cursor.created_at),
          eb.and([eb('created_at', '=', cursor.created_at), eb('id', '<', cursor.id)]),
        ]),
      );
    }
    const rows = await select
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    return listPage(rows, limit, auditEventView);
  }

  private row(actor: AuditActor, action: AuditAction): AuditEventTable {
    return {
      id: this.effects.ids.next('aud'),
      created_at: this.effects.clock.now(),
      actor_kind: actor.kind,
      actor_id: actor.id ?? null,
      actor_email: actor.email ?? null,
      address: actor.address ?? null,
      action: action.action,
      target_id: action.targetId ?? null,
      account_id: action.accountId ?? null,
      amount: action.amount ?? null,
      reason: action.reason ?? null,
      detail: action.detail === undefined ? null : JSON.stringify(action.detail),
    };
  }
}
