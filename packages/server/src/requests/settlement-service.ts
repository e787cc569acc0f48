import type { Kysely } from 'kysely';
import { z } from 'zod';
import { captureHold, releaseHold } from '../billing/ledger.js';
import { type LedgerEffects } from '../billing/journal.js';
import { parseMovementAmount } from '../billing/money.js';
import type { AuditWrite } from '../audit/audit-log.js';
import { ApiError, invalidInput } from '../errors/api-error.js';
import { parseInput, requiredAs, type Unparsed } from '../errors/input-schema.js';
import type { Database } from '../store/schema.js';
import { parseStoredJson, requestResolutionSchema } from '../store/stored-json.js';
import {
  operatorRecordView,
  recordView,
  type OperatorRecordView,
  type RecordRow,
  type RecordView,
} from './record-view.js';
import { awaitingFundsError, recordNotFound } from './request-errors.js';
import type { RequestStore } from './request-store.js';
import type { Claim, RequestIdentity, RequestService } from './request-service.js';

const NOT_AN_ACTION = 'must be capture or release';
const NO_REASON = 'is required';

/**
 * An operator's resolution of a record. The amount goes with the action (a capture's, a
 * movement's amount; none for a release): `resolve`'s rule, across the fields.
 */
const resolutionInput = z.object({
  action: requiredAs(NOT_AN_ACTION, z.enum(['capture', 'release'], { error: NOT_AN_ACTION })),
  reason: z
    .string({ error: NO_REASON })
    .refine((reason) => reason.trim().length > 0, { error: NO_REASON }),
  amount: z.unknown().optional(),
});

/**
 * Money moved after a request has finished: the caller settling a result that awaited funds
 * (spec 4.2) and an operator resolving an outcome that was never confirmed. Neither calls an
 * upstream; each resolves the request's hold at most once.
 */
export class SettlementService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly effects: LedgerEffects,
    private readonly records: RequestStore,
    private readonly requests: RequestService,
    /** Where a task of a kind lives on the wire (its family's path), to name its settle URL. */
    private readonly taskPath?: (kind: string, id: string) => string,
  ) {}

  /**
   * Captures a record that awaits funds, without regenerating anything. Settling twice never
   * charges twice: the hold moves out of `open` once. The settle is a business POST with its own
   * record, claimed like every other (fingerprint: method, this record's path, empty body), so a
   * retry with the same key replays the success and the same key sent to settle another record
   * is 409 `IDEMPOTENCY_CONFLICT`. Any refusal (402, 409) rolls back and records nothing.
   */
  async settle(identity: RequestIdentity, requestId: string): Promise<Claim> {
    const row = await this.records.byId(requestId);
    if (row === undefined || row.key_id !== identity.principal.keyId) throw recordNotFound();
    // Settled before settles had records of their own: the original names the settling key.
    if (row.status === 'succeeded' && settledBy(row) === identity.idempotencyKey)
      return { kind: 'replay', status: 200, body: recordView(row), requestId, transcript: null };
    return this.requests.claim(identity, null, [], async (trx) => {
      const current = await this.records.byId(requestId, trx);
      if (current === undefined) throw recordNotFound();
      if (
        current.status !== 'awaiting_funds' ||
        current.hold_id === null ||
        current.amount === null
      )
        throw await this.notSettleable(current, trx);
      const amount = current.amount;
      const now = this.effects.clock.now();
      const result = await captureHold(trx, this.effects, {
        holdId: current.hold_id,
        amount,
        reason: `settle ${requestId}`,
      });
      if (result === 'insufficient_funds') throw awaitingFundsError(requestId, amount);
      if (result === 'already_resolved') throw settlementRefused(requestId);
      const resolution = JSON.stringify({
        action: 'settled',
        idempotency_key: identity.idempotencyKey,
        at: new Date(now).toISOString(),
      });
      const moved = await this.records.transition(trx, requestId, 'awaiting_funds', 'succeeded', {
        resolution,
        updated_at: now,
      });
      // Not awaiting funds any more: the capture rolls back with this refusal.
      if (!moved) throw settlementRefused(requestId);
      const settled = await this.records.byId(requestId, trx);
      if (settled === undefined) throw recordNotFound();
      return {
        status: 200,
        body: recordView(settled),
        taskId: null,
        rule: `settlement of request ${requestId}: ${amount} micro-yuan charged on its hold`,
      };
    });
  }

  /** Why a record cannot be settled here; a task's creation names the task's own settle URL. */
  private async notSettleable(row: RecordRow, trx: Kysely<Database>): Promise<ApiError> {
    if (row.status === 'accepted' && row.task_id !== null) {
      const task = await trx
        .selectFrom('tasks')
        .select(['id', 'kind'])
        .where('id', '=', row.task_id)
        .executeTakeFirst();
      const where =
        task === undefined || this.taskPath === undefined
          ? 'its own settlement.url (read the task)'
          : `${this.taskPath(task.kind, task.id)}/settle (the task's settlement.url, once it gives one)`;
      return new ApiError(
        'SETTLEMENT_NOT_ALLOWED',
        `request ${row.id} created task ${row.task_id}: a task is settled at ${where}, never here`,
      );
    }
    return new ApiError(
      'SETTLEMENT_NOT_ALLOWED',
      `request ${row.id} cannot be settled: its status is ${row.status} (canSettle is false)`,
    );
  }

  /** The records an operator has to resolve (`submission_unknown`), oldest first, at most 100. */
  async awaitingResolution(): Promise<OperatorRecordView[]> {
    return (await this.records.awaitingResolution(100)).map(operatorRecordView);
  }

  /**
   * Operator resolution of a request whose outcome was never confirmed: capture an amount (the
   * work was done) or release the hold (it was not), with a reason. Only `submission_unknown`.
   * A capture takes a positive amount of at most one movement's maximum (capturing nothing is a
   * release); a release takes no amount (it always frees the whole hold).
   */
  async resolve(
    requestId: string,
    given: Unparsed<typeof resolutionInput>,
    audit?: AuditWrite,
  ): Promise<RecordView> {
    const input = parseInput(resolutionInput, given);
    if (input.action === 'release' && input.amount !== undefined)
      throw invalidInput('amount', 'a release frees the whole hold and takes no amount');
    if (input.action === 'capture' && input.amount === 0)
      throw invalidInput('amount', 'must be positive: to charge nothing, release the hold');
    const amount = input.action === 'capture' ? parseMovementAmount(input.amount, 'amount') : 0;
    const row = await this.records.byId(requestId);
    if (row === undefined) throw recordNotFound();
    if (row.status !== 'submission_unknown' || row.hold_id === null) {
      throw new ApiError(
        'SETTLEMENT_NOT_ALLOWED',
        `request ${requestId} is ${row.status}; only submission_unknown requests are resolved by an operator`,
      );
    }
    const holdId = row.hold_id;
    const now = this.effects.clock.now();
    const reason = input.reason.trim();
    await this.db.transaction().execute(async (trx) => {
      await this.records.applyPending(trx, requestId);
      const resolution = JSON.stringify({
        action: input.action,
        amount,
        reason,
        by: 'operator',
        at: new Date(now).toISOString(),
      });
      if (input.action === 'release') {
        if (!(await releaseHold(trx, this.effects, { holdId, reason: `operator: ${reason}` })))
          throw resolutionRefused(requestId);
        const moved = await this.records.transition(
          trx,
          requestId,
          'submission_unknown',
          'resolved',
          { resolution, updated_at: now },
        );
        // Finished meanwhile (a late outcome): the release rolls back with this refusal.
        if (!moved) throw resolutionRefused(requestId);
        await audit?.(trx);
        return;
      }
      const captured = await captureHold(trx, this.effects, {
        holdId,
        amount,
        reason: `operator: ${reason}`,
      });
      if (captured === 'insufficient_funds')
        throw new ApiError(
          'INSUFFICIENT_FUNDS',
          'the amount exceeds the hold and the difference is not available',
        );
      if (captured === 'already_resolved') throw resolutionRefused(requestId);
      const moved = await this.records.transition(
        trx,
        requestId,
        'submission_unknown',
        'resolved',
        {
          resolution,
          amount,
          pricing_rule: 'operator resolution',
          updated_at: now,
        },
      );
      if (!moved) throw resolutionRefused(requestId);
      await audit?.(trx, amount);
    });
    const resolved = await this.records.byId(requestId);
    if (resolved === undefined) throw recordNotFound();
    return recordView(resolved);
  }
}

/** A settle that found the record no longer awaiting funds once inside its transaction. */
function settlementRefused(requestId: string): ApiError {
  return new ApiError(
    'SETTLEMENT_NOT_ALLOWED',
    `request ${requestId} is no longer awaiting funds (settled already?): read GET /v1/requests/${requestId}`,
  );
}

/** A resolution that found the record or its hold resolved meanwhile (a late outcome, another operator). */
function resolutionRefused(requestId: string): ApiError {
  return new ApiError(
    'SETTLEMENT_NOT_ALLOWED',
    `request ${requestId} is no longer submission_unknown: it was finished or resolved meanwhile; read it again`,
  );
}

/** The idempotency key that settled a record, as its resolution names it. */
function settledBy(row: RecordRow): string | undefined {
  if (row.resolution === null) return undefined;
  const resolution = parseStoredJson(requestResolutionSchema, row.resolution, {
    table: 'requests',
    column: 'resolution',
    id: row.id,
  });
  return resolution.action === 'settled' ? resolution.idempotency_key : undefined;
}
