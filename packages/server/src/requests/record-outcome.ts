import type { Kysely } from 'kysely';
import { captureHold, releaseHold } from '../billing/ledger.js';
import { type LedgerEffects } from '../billing/journal.js';
import type { Database, RequestStatus } from '../store/schema.js';
import { awaitingFundsError } from './request-errors.js';
import type { Answer, RecordedOutcome, RequestIdentity } from './request-types.js';
import type { BatchedCapture } from './batched-capture.js';
import type { RecordedOutcomeColumns } from './outcome-columns.js';
import type { RequestStore } from './request-store.js';
import { finishLogged } from './logged-outcome.js';
import type { RecordLog } from './record-log.js';

/** Thrown inside the outcome's transaction to roll its money movement back. */
class OutcomeRefused extends Error {
  constructor() {
    super('the record or its hold was no longer in the expected state');
  }
}

/**
 * Writes a request's outcome into its record with its money movement (capture or release of
 * the hold), in one transaction, as the move `from` → the outcome's state. Returns the answer,
 * or `refused` when the record was not in `from` or its hold was no longer open: then the whole
 * transaction rolled back (no money moved, nothing written) and the caller decides what next.
 */
export async function writeOutcome(
  deps: {
    db: Kysely<Database>;
    effects: LedgerEffects;
    records: RequestStore;
    /** PostgreSQL: batches the captures of one account (batched-capture.ts). */
    captures?: BatchedCapture | undefined;
    /** `accounting.event_log`: the finish is an event (logged-outcome.ts); `from` is its guards'. */
    log?: RecordLog | undefined;
  },
  identity: RequestIdentity,
  holdId: string | null,
  outcome: RecordedOutcome,
  from: RequestStatus,
): Promise<Answer | 'refused'> {
  const { db, effects, records } = deps;
  const upstream = upstreamColumns(identity, outcome, effects.clock.now());
  try {
    if (outcome.kind === 'failed' || outcome.kind === 'unknown') {
      const body = outcome.error.toBody(identity.requestId);
      const columns: RecordedOutcomeColumns = {
        ...upstream,
        status: outcome.kind === 'failed' ? 'failed' : 'submission_unknown',
        http_status: outcome.error.status,
        response_body: JSON.stringify(body),
        error_code: outcome.error.code,
        usage: null,
        amount: null,
        pricing_rule: outcome.rule ?? null,
        usage_flag: null,
        line_items: null,
      };
      const reason = `failed: ${outcome.error.code}`;
      if (deps.log !== undefined) {
        const finished = await finishLogged(
          db,
          effects,
          identity,
          outcome.kind === 'failed' && holdId !== null
            ? { move: 'release', holdId, reason, outcome: columns }
            : { move: 'none', outcome: columns },
        );
        if (finished === 'refused') return 'refused';
        return { status: outcome.error.status, body };
      }
      await db.transaction().execute(async (trx) => {
        if (outcome.kind === 'failed' && holdId !== null) {
          if (!(await releaseHold(trx, effects, { holdId, reason }))) throw new OutcomeRefused();
        }
        const moved = await records.recordOutcome(trx, from, columns);
        if (!moved) throw new OutcomeRefused();
      });
      return { status: outcome.error.status, body };
    }
    // Serialised once: recorded for replays and sent as the answer (http/billed-request.ts).
    const json = JSON.stringify(outcome.body);
    const succeeded = (status: 'succeeded' | 'awaiting_funds') =>
      succeededColumns(upstream, outcome, json, status);
    if (deps.log !== undefined) {
      const finished = await finishLogged(
        db,
        effects,
        identity,
        holdId === null
          ? { move: 'none', outcome: succeeded('succeeded') }
          : {
              move: 'capture',
              holdId,
              amount: outcome.amount,
              reason: captureReason(identity),
              outcome: succeeded('succeeded'),
              awaitingFunds: succeeded('awaiting_funds'),
            },
      );
      if (finished === 'refused') return 'refused';
      if (finished === 'moved') return { status: outcome.status ?? 200, body: outcome.body, json };
      return awaitingFunds(identity, outcome.amount);
    }
    // PostgreSQL: with the other captures of its account in this turn (batched-capture.ts).
    if (deps.captures !== undefined && holdId !== null && from === 'processing') {
      const batched = await deps.captures.capture({
        accountId: identity.principal.accountId,
        holdId,
        amount: outcome.amount,
        reason: captureReason(identity),
        budgeted: identity.principal.budgeted,
        record: succeeded('succeeded'),
      });
      if (batched === 'captured')
        return { status: outcome.status ?? 200, body: outcome.body, json };
    }
    const captured = await db.transaction().execute(async (trx) => {
      // The money first, then the record: every writer of a record with a hold locks the hold,
      // then the account, then the record, so two of them never wait on each other in a circle.
      const result =
        holdId === null
          ? 'captured'
          : await captureHold(trx, effects, {
              holdId,
              amount: outcome.amount,
              reason: captureReason(identity),
            });
      if (result === 'already_resolved') throw new OutcomeRefused();
      const moved = await records.recordOutcome(
        trx,
        from,
        succeeded(result === 'captured' ? 'succeeded' : 'awaiting_funds'),
      );
      if (!moved) throw new OutcomeRefused();
      return result === 'captured';
    });
    if (captured) return { status: outcome.status ?? 200, body: outcome.body, json };
    return awaitingFunds(identity, outcome.amount);
  } catch (error) {
    if (error instanceof OutcomeRefused) return 'refused';
    throw error;
  }
}

type UpstreamColumns = Pick<
  RecordedOutcomeColumns,
  | 'id'
  | 'upstream_request_id'
  | 'updated_at'
  | 'transcript'
  | 'channel'
  | 'channel_attempts'
  | 'channel_cost'
>;

/** What every outcome writes into its record about the upstream call. */
function upstreamColumns(
  identity: RequestIdentity,
  outcome: RecordedOutcome,
  now: number,
): UpstreamColumns {
  return {
    id: identity.requestId,
    upstream_request_id: outcome.upstreamRequestId,
    updated_at: now,
    transcript: outcome.transcript === undefined ? null : JSON.stringify(outcome.transcript),
    channel: outcome.routing?.channel ?? null,
    channel_attempts:
      outcome.routing === undefined || outcome.routing.attempts.length === 0
        ? null
        : JSON.stringify(outcome.routing.attempts),
    channel_cost: outcome.kind === 'succeeded' ? (outcome.channelCost ?? null) : null,
  };
}

/** The record of a priced result, charged (`succeeded`) or not yet (`awaiting_funds`). */
function succeededColumns(
  upstream: UpstreamColumns,
  outcome: Extract<RecordedOutcome, { kind: 'succeeded' }>,
  json: string,
  status: 'succeeded' | 'awaiting_funds',
): RecordedOutcomeColumns {
  // Its own properties first, then the upstream's: V8 (Node 20) adds properties to a spread
  // copy through a slow path, microseconds per object; spread last, it is a plain copy
  // (bench/RESULTS.md, "Object spreads").
  return {
    status,
    http_status: outcome.status ?? 200,
    response_body: json,
    error_code: null,
    usage: JSON.stringify(outcome.usage),
    amount: outcome.amount,
    pricing_rule: outcome.pricingRule,
    usage_flag: outcome.usageFlag ?? null,
    line_items: outcome.lineItems === undefined ? null : JSON.stringify(outcome.lineItems),
    ...upstream,
  };
}

/** What a priced result that could not be charged answers: 402, the hold kept for a settle. */
const awaitingFunds = (identity: RequestIdentity, amount: number): Answer => ({
  status: 402,
  body: awaitingFundsError(identity.requestId, amount).toBody(identity.requestId),
});

const captureReason = (identity: RequestIdentity) => `usage of ${identity.requestId}`;
