import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { ErrorBody } from '@tollgate/protocol';
import type { Principal } from '../auth/key-service.js';
import { recordAssetUses } from '../assets/asset-uses.js';
import { placeHold } from '../billing/ledger.js';
import { type LedgerEffects } from '../billing/journal.js';
import { ApiError } from '../errors/api-error.js';
import type { Database } from '../store/schema.js';
import { RecordHeartbeat } from './record-heartbeat.js';
import { writeOutcome } from './record-outcome.js';
import { recordView, type RecordRow, type RecordView } from './record-view.js';
import {
  awaitingFundsError,
  idempotencyConflict,
  insufficientFunds,
  overBudget,
  recordNotFound,
} from './request-errors.js';
import { RequestStore, type NewRecord } from './request-store.js';
import { claimLogged } from './logged-claim.js';
import type { RecordLog } from './record-log.js';
import { BatchedAdmission } from './batched-admission.js';
import { BatchedCapture } from './batched-capture.js';
import { withFields } from '../util/with-fields.js';

export type {
  Answer,
  Claim,
  InsideClaim,
  Outcome,
  RecordedOutcome,
  RequestIdentity,
  Reserve,
  RoutingTrail,
} from './request-types.js';
import type {
  Answer,
  Claim,
  InsideClaim,
  RecordedOutcome,
  RequestIdentity,
  Reserve,
} from './request-types.js';

/**
 * Idempotent, billed requests. A request is claimed once per (API key, idempotency key) in the
 * same transaction that takes its hold; a second arrival replays, conflicts or waits; the
 * outcome is recorded together with the capture or release, so the record and the ledger never
 * disagree. Provider calls run outside every transaction.
 */
export class RequestService {
  readonly records: RequestStore;
  readonly #admission: BatchedAdmission | undefined;
  readonly #captures: BatchedCapture | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly effects: LedgerEffects,
    private readonly retentionMs: number,
    /** Where an outcome that could not be recorded is reported (`finish`). */
    private readonly logger: Pick<FastifyBaseLogger, 'warn' | 'info'>,
    /**
     * PostgreSQL: batch the plain claims (and captures, and the idempotency guard's reads) of
     * each event-loop turn (batched-admission.ts, batched-capture.ts, batched-fingerprints.ts;
     * `postgres.batch_money`). SQLite commits in groups already (store/sqlite-group-commit.ts)
     * and never batches here.
     */
    batchMoney = false,
    /**
     * `accounting.event_log`: the plain claims (a hold, no assets, no work inside) and every
     * finish write events, not rows (record-log.ts; decision 0019). Not with `batchMoney`.
     */
    log?: RecordLog,
  ) {
    if (batchMoney && log !== undefined)
      throw new Error('the event log does not take the batched money paths (postgres.batch_money)');
    this.records = new RequestStore(db, batchMoney, log);
    // A batch that rolled back costs each of its requests a transaction of its own: worth
    // knowing when it happens often (a deadlock would show here, after deadlock_timeout).
    const alone = (what: string) => (error: unknown) =>
      logger.warn({ err: error }, `a batch of ${what} rolled back; each ran alone`);
    this.#admission = batchMoney
      ? new BatchedAdmission(db, effects, this.records, alone('claims'))
      : undefined;
    this.#captures = batchMoney ? new BatchedCapture(db, effects, alone('captures')) : undefined;
  }

  /**
   * Claims the idempotency key, takes the hold and records the assets the request uses, all in
   * one transaction: a refusal of any of them (402, an asset deleted meanwhile) leaves nothing.
   */
  async claim(
    identity: RequestIdentity,
    reserve: Reserve | null,
    assetIds: readonly string[] = [],
    /**
     * Work done inside the claim's transaction once the hold (if any) is taken, whose answer
     * becomes the record's: task creation (`accepted`, 202, `task_id`), so that the claim, the
     * hold, the asset uses and the task row commit together or not at all; a task settlement,
     * so that a refusal (402, 409) records nothing. An `ApiError` it throws rolls all back and
     * is the refusal.
     */
    inside?: InsideClaim,
  ): Promise<Claim> {
    const now = this.effects.clock.now();
    // The hold's id is known up front so the record names it in its first write.
    const holdId = reserve === null ? null : this.effects.ids.next('hold');
    const record = this.#newRecord(identity, reserve, holdId, now);
    if (
      this.#admission !== undefined &&
      reserve !== null &&
      holdId !== null &&
      assetIds.length === 0 &&
      inside === undefined
    ) {
      const budgetKeyId = identity.principal.budgeted ? identity.principal.keyId : null;
      const admission = await this.#admission.admit(
        withFields(record, {
          hold_id: holdId,
          reserve_amount: reserve.amount,
          price_version: reserve.priceVersion,
        }),
        budgetKeyId,
      );
      if (admission.kind === 'admitted') return { kind: 'claimed', holdId };
      if (admission.kind === 'existing')
        return this.answerExisting(admission.row, identity.fingerprint);
      if (admission.kind === 'refused') return { kind: 'refused', error: admission.error };
    }
    if (
      this.records.log !== undefined &&
      reserve !== null &&
      holdId !== null &&
      assetIds.length === 0 &&
      inside === undefined
    ) {
      const claim = await claimLogged(this.db, this.effects, this.records, identity, record, {
        holdId,
        amount: reserve.amount,
        priceVersion: reserve.priceVersion,
      });
      return claim.kind === 'existing'
        ? this.answerExisting(claim.row, identity.fingerprint)
        : claim;
    }
    try {
      return await this.db.transaction().execute(async (trx) => {
        const inserted = await this.records.insertUnlessKeyUsed(trx, record);
        if (!inserted) {
          const existing = await this.records.byIdempotencyKey(
            identity.principal.keyId,
            identity.idempotencyKey,
            trx,
          );
          if (existing === undefined) throw new Error('idempotency conflict without a record');
          return this.answerExisting(existing, identity.fingerprint);
        }
        await recordAssetUses(trx, {
          accountId: identity.principal.accountId,
          requestId: identity.requestId,
          assetIds,
          now,
        });
        if (reserve === null || holdId === null)
          return inside === undefined
            ? { kind: 'claimed', holdId: null }
            : this.finishInside(trx, identity, null, inside, now);
        const placed = await placeHold(trx, this.effects, {
          accountId: identity.principal.accountId,
          amount: reserve.amount,
          requestId: identity.requestId,
          priceVersion: reserve.priceVersion,
          holdId,
          budgetKeyId: identity.principal.budgeted ? identity.principal.keyId : null,
        });
        // Not enough available, or over a budget: roll the claim back too. Nothing happened, so
        // nothing is recorded and the same idempotency key may be sent again later.
        if (placed.kind === 'insufficient_funds') throw insufficientFunds(reserve.amount);
        if (placed.kind === 'over_budget') throw overBudget(reserve.amount, placed);
        return inside === undefined
          ? { kind: 'claimed', holdId }
          : this.finishInside(trx, identity, holdId, inside, now);
      });
    } catch (error) {
      if (error instanceof ApiError) return { kind: 'refused', error };
      throw error;
    }
  }

  /** A claim's new record: `processing`, naming its hold. */
  #newRecord(
    identity: RequestIdentity,
    reserve: Reserve | null,
    holdId: string | null,
    now: number,
  ): NewRecord {
    return {
      id: identity.requestId,
      key_id: identity.principal.keyId,
      account_id: identity.principal.accountId,
      idempotency_key: identity.idempotencyKey,
      fingerprint: identity.fingerprint,
      method: identity.method,
      path: identity.path,
      model: identity.model,
      status: 'processing',
      http_status: null,
      response_body: null,
      error_code: null,
      usage: null,
      hold_id: holdId,
      reserve_amount: reserve?.amount ?? null,
      amount: null,
      price_version: reserve?.priceVersion ?? null,
      pricing_rule: null,
      upstream_request_id: null,
      resolution: null,
      transcript: null,
      task_id: null,
      created_at: now,
      updated_at: now,
      expires_at: now + this.retentionMs,
    };
  }

  /** Records the answer of work done inside a claim, in the claim's transaction. */
  private async finishInside(
    trx: Kysely<Database>,
    identity: RequestIdentity,
    holdId: string | null,
    inside: InsideClaim,
    now: number,
  ): Promise<Claim> {
    const answer = await inside(trx, holdId);
    const moved = await this.records.transition(
      trx,
      identity.requestId,
      'processing',
      answer.taskId === null ? 'succeeded' : 'accepted',
      {
        http_status: answer.status,
        response_body: JSON.stringify(answer.body),
        task_id: answer.taskId,
        // The money of a task is on the task (its hold, its settlement), never on these records.
        amount: answer.taskId === null ? 0 : null,
        pricing_rule: answer.rule ?? null,
        updated_at: now,
      },
    );
    // Inserted by this very transaction: no one else can have moved it.
    if (!moved) throw new Error(`record ${identity.requestId} moved inside its own claim`);
    return {
      kind: 'replay',
      status: answer.status,
      body: answer.body,
      requestId: identity.requestId,
      transcript: null,
      fresh: true,
    };
  }

  private answerExisting(existing: RecordRow, fingerprint: string): Claim {
    if (existing.fingerprint !== fingerprint) {
      return { kind: 'refused', error: idempotencyConflict(existing.id) };
    }
    if (existing.status === 'processing') {
      return {
        kind: 'refused',
        error: new ApiError(
          'IDEMPOTENCY_IN_PROGRESS',
          `the original request ${existing.id} is still running; read GET /v1/requests/${existing.id}`,
          'Idempotency-Key',
        ),
      };
    }
    const answer = storedAnswer(existing);
    const transcript =
      existing.transcript === null ? null : (JSON.parse(existing.transcript) as string[]);
    return {
      kind: 'replay',
      status: answer.status,
      body: answer.body,
      requestId: existing.id,
      transcript,
    };
  }

  /**
   * Records the outcome with its money movement in one transaction, and says what to answer.
   *
   * The record is expected `processing`. If it is not, nothing of this attempt stays (the
   * capture or release rolls back with it) and:
   * - `submission_unknown` (the sweeper took this request for one of a dead instance): its hold
   *   is still open, and this confirmed outcome is exactly the reconciliation an operator would
   *   do, so it is recorded from there, with its money movement (an unconfirmed one replaces
   *   the sweeper's guess with its own account);
   * - anything else (an operator resolved it meanwhile: its money has moved already): the
   *   outcome is not recorded; it is logged with everything needed to reconcile by hand, and the
   *   caller gets what the record says, as a replay would.
   */
  async finish(
    identity: RequestIdentity,
    holdId: string | null,
    outcome: RecordedOutcome,
  ): Promise<Answer> {
    const deps = {
      db: this.db,
      effects: this.effects,
      records: this.records,
      captures: this.#captures,
      log: this.records.log,
    };
    const answer = await writeOutcome(deps, identity, holdId, outcome, 'processing');
    if (answer !== 'refused') return answer;
    const swept = await this.records.byId(identity.requestId);
    if (swept?.status === 'submission_unknown') {
      const late = await writeOutcome(deps, identity, holdId, outcome, 'submission_unknown');
      if (late !== 'refused') return late;
    }
    const current = await this.records.byId(identity.requestId);
    if (current === undefined || current.status === 'processing')
      throw new Error(`the outcome of ${identity.requestId} was refused, yet nothing moved it`);
    this.logger.warn(
      {
        requestId: identity.requestId,
        recordStatus: current.status,
        holdId,
        outcome: outcome.kind,
        amount: outcome.kind === 'succeeded' ? outcome.amount : null,
        usage: outcome.kind === 'succeeded' ? outcome.usage : null,
        upstreamRequestId: outcome.upstreamRequestId,
      },
      'late outcome not recorded: the record was resolved meanwhile; reconcile by hand',
    );
    return storedAnswer(current);
  }

  /**
   * A record still `processing` and untouched (no heartbeat: `heartbeat`) since `olderThan`
   * means the instance that ran it died mid-flight. Its outcome is unknown: move it to
   * `submission_unknown`, hold kept. Returns how many moved.
   */
  async markStaleAsUnknown(olderThan: number): Promise<number> {
    const body = (id: string) =>
      JSON.stringify(
        new ApiError('UPSTREAM_ERROR', `${STALE_PROCESSING_REASON}; the outcome is unknown`).toBody(
          id,
        ),
      );
    const stale = await this.db
      .selectFrom('requests')
      .select('id')
      .where('status', '=', 'processing')
      .where('updated_at', '<', olderThan)
      .execute();
    // And the claims still in the event log, whose records have never shown a sign of life (a
    // heartbeat applies them first): the transition below applies their events, then judges.
    if (this.records.log !== undefined)
      stale.push(
        ...(await this.db
          .selectFrom('events')
          .select('request_id as id')
          .where('kind', '=', 'claim')
          .where('created_at', '<', olderThan)
          .execute()),
      );
    let moved = 0;
    for (const { id } of stale) {
      const columns = {
        http_status: 502,
        error_code: 'UPSTREAM_ERROR',
        response_body: body(id),
        updated_at: this.effects.clock.now(),
      };
      // Guarded on both: a finish or a heartbeat since the select wins.
      const swept = await this.records.transition(
        this.db,
        id,
        'processing',
        'submission_unknown',
        columns,
        { updatedBefore: olderThan },
      );
      if (swept) moved += 1;
    }
    return moved;
  }

  /** The heartbeat of a long stream's record (record-heartbeat.ts), at most once every `everyMs`. */
  heartbeat(requestId: string, everyMs: number): RecordHeartbeat {
    return new RecordHeartbeat(
      everyMs,
      this.effects.clock,
      (now) =>
        this.records.transition(this.db, requestId, 'processing', 'processing', {
          updated_at: now,
        }),
      (trouble, error) =>
        this.logger.warn(
          { requestId, err: error },
          trouble === 'refused'
            ? 'stream heartbeat refused: the record is no longer processing'
            : 'stream heartbeat failed',
        ),
    );
  }

  /**
   * A stream whose usage was not available told its caller it awaits funds: its transcript ends
   * so, for replays. Refused only if the caller settled in between; then the stored transcript
   * (ending in `[DONE]`) is the right one for a settled record and stays.
   */
  async recordAwaitingFundsTranscript(
    requestId: string,
    transcript: readonly string[],
  ): Promise<void> {
    const moved = await this.records.transition(
      this.db,
      requestId,
      'awaiting_funds',
      'awaiting_funds',
      { transcript: JSON.stringify(transcript), updated_at: this.effects.clock.now() },
    );
    if (!moved) this.logger.info({ requestId }, 'settled before its stream transcript was kept');
  }

  /** Reads a record; every other key gets the same 404 as a missing id. */
  async read(principal: Principal, requestId: string): Promise<RecordView> {
    const row = await this.records.byId(requestId);
    if (row === undefined || row.key_id !== principal.keyId) throw recordNotFound();
    return recordView(row);
  }

  async readByIdempotencyKey(principal: Principal, idempotencyKey: string): Promise<RecordView> {
    const row = await this.records.byIdempotencyKey(principal.keyId, idempotencyKey.toLowerCase());
    if (row === undefined) throw recordNotFound();
    return recordView(row);
  }
}

export const STALE_PROCESSING_REASON = 'the gateway stopped while the request was running';

/** The answer a finished record gives to a replay: its current state, not a cached guess. */
function storedAnswer(row: RecordRow): Answer {
  if (row.status === 'awaiting_funds')
    return { status: 402, body: awaitingFundsError(row.id, row.amount ?? 0).toBody(row.id) };
  const body = row.response_body === null ? null : (JSON.parse(row.response_body) as unknown);
  if (row.status === 'resolved' && row.http_status === 200) return { status: 200, body };
  return {
    status: row.http_status ?? 500,
    body:
      body ??
      ({
        error: { code: 'INTERNAL_ERROR', message: 'no stored answer', request_id: row.id },
      } satisfies ErrorBody),
  };
}
