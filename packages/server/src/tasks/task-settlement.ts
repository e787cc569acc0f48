import {
  SETTLE_CONFIRMATION,
  type H3_SETTLE_CONFIRMATION,
  type H3SettleBody,
  type SettleBody as ProtocolSettleBody,
} from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { captureHold } from '../billing/ledger.js';
import { type LedgerEffects } from '../billing/journal.js';
import { ApiError } from '../errors/api-error.js';
import { jsonSchemaOf, valuesOnly } from '../errors/input-schema.js';
import type { Claim, RequestIdentity, RequestService } from '../requests/request-service.js';
import type { Database, TaskKind } from '../store/schema.js';
import { taskNotFound } from './task-reads.js';
import type { TaskRow, TaskStore } from './task-store.js';
import type { TaskFamilies } from './task-family.js';

export { SETTLE_CONFIRMATION } from '@tollgate/protocol';

/**
 * The settle body of spec 4.3 as a schema: exactly three fields, `confirmation` a constant. The
 * route adds the 4096-byte limit, `application/json` only and the no-query rule.
 */
export const settleBody = settleBodyFor(SETTLE_CONFIRMATION);

/** The same schema with the confirmation word of a family: H3's is `settle_original_h3` (spec 4.5). */
export function settleBodyFor<const Word extends string>(confirmation: Word) {
  return z.strictObject({
    actual_amount: z.int().min(1).max(Number.MAX_SAFE_INTEGER),
    price_version: z.string().min(1).max(200),
    // `{"const": word}` alone: any other value, a number too, is "must be <word>".
    confirmation: valuesOnly(z.literal(confirmation)),
  });
}

/** The body as the schema lets it through: the protocol's `SettleBody` (both ways, below). */
export type SettleBody = z.output<typeof settleBody>;
type DerivedH3SettleBody = z.output<
  ReturnType<typeof settleBodyFor<typeof H3_SETTLE_CONFIRMATION>>
>;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameAsProtocol: [
  Same<SettleBody, ProtocolSettleBody>,
  Same<DerivedH3SettleBody, H3SettleBody>,
] = [true, true];
void sameAsProtocol;

/**
 * A settle body's JSON Schema, checked by Ajv before the handler runs, made of its zod schema;
 * typed as its readers (the wire-types test) see it: these fields, each required, no other.
 */
export type SettleBodySchema = Record<string, unknown> & {
  readonly required: readonly (keyof SettleBody)[];
  readonly properties: Readonly<Record<keyof SettleBody, Readonly<Record<string, unknown>>>>;
  readonly additionalProperties: false;
};
export const settleBodySchema = settleBodySchemaFor(SETTLE_CONFIRMATION);
export function settleBodySchemaFor(confirmation: string): SettleBodySchema {
  return jsonSchemaOf(settleBodyFor(confirmation)) as SettleBodySchema;
}

/**
 * Settles a priced task with the exact body of spec 4.3, and delivers its outputs: in one
 * transaction with the settle's own record, the hold is captured at the actual amount (once:
 * the hold moves out of `open` once, so concurrent settles charge once), the task's billing
 * moves `pending` → `settled`, and its outputs become readable. Any refusal (402, 409) rolls
 * all of it back and records nothing, so the same body settles after a top-up; a repeat with the
 * same idempotency key replays the success.
 */
export class TaskSettlement {
  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      tasks: TaskStore;
      families: TaskFamilies;
      requests: RequestService;
      effects: LedgerEffects;
    },
  ) {}

  async settle(
    identity: RequestIdentity,
    target: { kind: TaskKind; id: string },
    body: SettleBody | H3SettleBody,
  ): Promise<Claim> {
    const owned = await this.deps.tasks.ownedBy(target.id, {
      keyId: identity.principal.keyId,
      kind: target.kind,
    });
    if (owned === undefined) throw taskNotFound();
    return this.deps.requests.claim(identity, null, [], async (trx) => {
      const current = await this.deps.tasks.byId(target.id, trx);
      if (current === undefined) throw taskNotFound();
      const now = this.deps.effects.clock.now();
      checkSettleBody(current, body, now);
      const amount = body.actual_amount;
      const captured = await captureHold(trx, this.deps.effects, {
        holdId: current.hold_id,
        amount,
        reason: `settle ${current.kind} task ${current.id}`,
      });
      if (captured === 'insufficient_funds')
        throw new ApiError(
          'INSUFFICIENT_FUNDS',
          `settling costs ${amount} micro-yuan and ${current.quoted_amount} are reserved; the difference is not available: top up, then send the same settle body again (nothing is regenerated)`,
        );
      // Resolved meanwhile: by another settle, or by the sweeper's expiry (then say so).
      if (captured === 'already_resolved')
        throw notPending((await this.deps.tasks.byId(current.id, trx)) ?? current);
      const moved = await this.deps.tasks.move(
        trx,
        { id: current.id, now, billing_state: { from: 'pending', to: 'settled' } },
        { settled_amount: amount, settled_at: now },
      );
      if (!moved) throw notPending(current);
      await trx
        .updateTable('assets')
        .set({ delivered_at: now })
        .where('task_id', '=', current.id)
        .where('delivered_at', 'is', null)
        .execute();
      const settled = await this.deps.tasks.byId(current.id, trx);
      if (settled === undefined) throw taskNotFound();
      return {
        status: 200,
        body: this.deps.families.of(settled.kind).view(settled),
        taskId: null,
        rule: `settlement of task ${current.id}: ${amount} micro-yuan charged on the task's hold`,
      };
    });
  }
}

/**
 * Spec 4.3, rule by rule: a task that awaits settlement within its window (past
 * `settlement_expires_at` it is expired, even before the sweeper released its hold), its actual
 * amount and price version.
 */
function checkSettleBody(task: TaskRow, body: SettleBody | H3SettleBody, now: number): void {
  if (task.billing_state === 'pending' && isPastWindow(task, now)) throw expired(task);
  if (task.billing_state !== 'pending' || task.actual_amount === null) throw notPending(task);
  if (body.price_version !== task.price_version)
    throw new ApiError(
      'SETTLEMENT_MISMATCH',
      `price_version must be billing.price_version of the task (${task.price_version})`,
      'price_version',
    );
  if (body.actual_amount !== task.actual_amount)
    throw new ApiError(
      'SETTLEMENT_MISMATCH',
      body.actual_amount === task.quoted_amount && task.quoted_amount !== task.actual_amount
        ? `actual_amount is the quoted amount; settle billing.actual_amount (${task.actual_amount}), never the quote`
        : `actual_amount must be billing.actual_amount of the task (${task.actual_amount})`,
      'actual_amount',
    );
}

/** Whether a pending task's settlement window has closed at `now`. */
function isPastWindow(task: TaskRow, now: number): boolean {
  return task.settlement_expires_at !== null && now >= task.settlement_expires_at;
}

function expired(task: TaskRow): ApiError {
  if (task.resolution !== null)
    return new ApiError(
      'SETTLEMENT_EXPIRED',
      `task ${task.id} was released by an operator before it was settled: nothing is charged, its hold is released and its outputs are deleted; create the task again`,
    );
  return new ApiError(
    'SETTLEMENT_EXPIRED',
    `task ${task.id} was not settled within its settlement window (it closed at ${new Date(task.settlement_expires_at ?? 0).toISOString()}): nothing is charged, its hold is released and its outputs are deleted; create the task again`,
  );
}

function notPending(task: TaskRow): ApiError {
  if (task.billing_state === 'expired') return expired(task);
  return new ApiError(
    'SETTLEMENT_NOT_ALLOWED',
    task.billing_state === 'settled'
      ? `task ${task.id} is settled already`
      : `task ${task.id} has nothing to settle now (billing state ${task.billing_state}); read it and settle only when it gives a settlement url`,
  );
}
