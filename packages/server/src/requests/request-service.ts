import type { Kysely } from 'kysely';
import type { ErrorBody } from '@tollgate/protocol';
import type { Principal } from '../auth/key-service.js';
import { recordAssetUses } from '../assets/asset-uses.js';
import { captureHold, placeHold, releaseHold, type LedgerEffects } from '../billing/ledger.js';
import { ApiError } from '../errors/api-error.js';
import type { Database } from '../store/schema.js';
import { recordView, type RecordRow, type RecordView } from './record-view.js';
import { awaitingFundsError, insufficientFunds, recordNotFound } from './request-errors.js';
import { RequestStore } from './request-store.js';

/** What the caller asked for, as the record remembers it. */
export interface RequestIdentity {
  readonly requestId: string;
  readonly principal: Principal;
  readonly idempotencyKey: string;
  readonly fingerprint: string;
  readonly method: string;
  readonly path: string;
  readonly model: string | null;
}

export interface Reserve {
  readonly amount: number;
  readonly priceVersion: string;
}

/** How an operation ended, as the provider call reports it. */
export type Outcome =
  /** Confirmed result with priced usage. */
  | {
      kind: 'succeeded';
      body: unknown;
      usage: Record<string, number>;
      amount: number;
      pricingRule: string;
      upstreamRequestId: string | null;
      /** The success status to answer and replay (default 200; uploads 201). */
      status?: number;
      /** Set when the upstream reported usage beyond the gateway's cap and the cap was billed instead. */
      usageFlag?: string;
    }
  /** Confirmed failure: nothing was delivered, nothing is charged; the hold is released. */
  | { kind: 'failed'; error: ApiError; upstreamRequestId: string | null; rule?: string }
  /** Not confirmed either way: the hold is kept for reconciliation or an operator. */
  | { kind: 'unknown'; error: ApiError; upstreamRequestId: string | null; rule?: string };

/** Streams also record what the caller was sent, to replay it. */
export type RecordedOutcome = Outcome & { transcript?: readonly string[] };

export type Claim =
  | { kind: 'claimed'; holdId: string | null }
  | {
      kind: 'replay';
      status: number;
      body: unknown;
      requestId: string;
      transcript: string[] | null;
    }
  | { kind: 'refused'; error: ApiError };

/** The answer to send for a finished operation. */
export interface Answer {
  status: number;
  body: unknown;
}

/**
 * Idempotent, billed requests. A request is claimed once per (API key, idempotency key) in the
 * same transaction that takes its hold; a second arrival replays, conflicts or waits; the
 * outcome is recorded together with the capture or release, so the record and the ledger never
 * disagree. Provider calls run outside every transaction.
 */
export class RequestService {
  readonly records: RequestStore;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly effects: LedgerEffects,
    private readonly retentionMs: number,
  ) {
    this.records = new RequestStore(db);
  }

  /**
   * Claims the idempotency key, takes the hold and records the assets the request uses, all in
   * one transaction: a refusal of any of them (402, an asset deleted meanwhile) leaves nothing.
   */
  async claim(
    identity: RequestIdentity,
    reserve: Reserve | null,
    assetIds: readonly string[] = [],
  ): Promise<Claim> {
    const now = this.effects.clock.now();
    // The hold's id is known up front so the record names it in its first write.
    const holdId = reserve === null ? null : this.effects.ids.next('hold');
    try {
      return await this.db.transaction().execute(async (trx) => {
        const inserted = await this.records.insertUnlessKeyUsed(trx, {
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
          created_at: now,
          updated_at: now,
          expires_at: now + this.retentionMs,
        });
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
        if (reserve === null || holdId === null) return { kind: 'claimed', holdId: null };
        const placed = await placeHold(trx, this.effects, {
          accountId: identity.principal.accountId,
          amount: reserve.amount,
          requestId: identity.requestId,
          priceVersion: reserve.priceVersion,
          holdId,
        });
        // Not enough available: roll the claim back too. Nothing happened, so nothing is
        // recorded and the same idempotency key may be sent again after a top-up.
        if (placed === null) throw insufficientFunds(reserve.amount);
        return { kind: 'claimed', holdId };
      });
    } catch (error) {
      if (error instanceof ApiError) return { kind: 'refused', error };
      throw error;
    }
  }

  private answerExisting(existing: RecordRow, fingerprint: string): Claim {
    if (existing.fingerprint !== fingerprint) {
      return {
        kind: 'refused',
        error: new ApiError(
          'IDEMPOTENCY_CONFLICT',
          `this Idempotency-Key was used for a different request (${existing.id}); use a new key for a new request`,
          'Idempotency-Key',
        ),
      };
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

  /** Records the outcome with its money movement in one transaction, and says what to answer. */
  async finish(
    identity: RequestIdentity,
    holdId: string | null,
    outcome: RecordedOutcome,
  ): Promise<Answer> {
    const now = this.effects.clock.now();
    const upstream = {
      id: identity.requestId,
      upstream_request_id: outcome.upstreamRequestId,
      updated_at: now,
      transcript: outcome.transcript === undefined ? null : JSON.stringify(outcome.transcript),
    };
    if (outcome.kind === 'failed' || outcome.kind === 'unknown') {
      const body = outcome.error.toBody(identity.requestId);
      await this.db.transaction().execute(async (trx) => {
        if (outcome.kind === 'failed' && holdId !== null) {
          await releaseHold(trx, this.effects, { holdId, reason: `failed: ${outcome.error.code}` });
        }
        await this.records.recordOutcome(trx, {
          ...upstream,
          status: outcome.kind === 'failed' ? 'failed' : 'submission_unknown',
          http_status: outcome.error.status,
          response_body: JSON.stringify(body),
          error_code: outcome.error.code,
          usage: null,
          amount: null,
          pricing_rule: outcome.rule ?? null,
          usage_flag: null,
        });
      });
      return { status: outcome.error.status, body };
    }
    const bill = {
      ...upstream,
      response_body: JSON.stringify(outcome.body),
      error_code: null,
      usage: JSON.stringify(outcome.usage),
      amount: outcome.amount,
      pricing_rule: outcome.pricingRule,
      usage_flag: outcome.usageFlag ?? null,
    };
    const captured = await this.db.transaction().execute(async (trx) => {
      const result =
        holdId === null
          ? 'captured'
          : await captureHold(trx, this.effects, {
              holdId,
              amount: outcome.amount,
              reason: `usage of ${identity.requestId}`,
            });
      if (result === 'already_resolved')
        throw new Error(`hold ${holdId} of ${identity.requestId} resolved twice`);
      const status = result === 'captured' ? 'succeeded' : 'awaiting_funds';
      await this.records.recordOutcome(trx, {
        ...bill,
        status,
        http_status: outcome.status ?? 200,
      });
      return result === 'captured';
    });
    if (captured) return { status: outcome.status ?? 200, body: outcome.body };
    return {
      status: 402,
      body: awaitingFundsError(identity.requestId, outcome.amount).toBody(identity.requestId),
    };
  }

  /**
   * A record still `processing` long after any upstream timeout means the instance that ran it
   * died mid-flight. Its outcome is unknown: move it to `submission_unknown`, hold kept.
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
    for (const { id } of stale) {
      await this.db
        .updateTable('requests')
        .set({
          status: 'submission_unknown',
          http_status: 502,
          error_code: 'UPSTREAM_ERROR',
          response_body: body(id),
          updated_at: this.effects.clock.now(),
        })
        .where('id', '=', id)
        .where('status', '=', 'processing')
        .execute();
    }
    return stale.length;
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
