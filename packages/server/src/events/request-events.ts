import { sql, type Kysely } from 'kysely';
import type { Database, RequestStatus, RequestTable } from '../store/schema.js';
import type { LoggedEvent } from './projector.js';

/**
 * The events a request record's life writes into the log (decision 0019, "Settled before the
 * first slice", point 4; docs/event-log-cutover.md, slice 3). Each kind is at most once per
 * request (`events_request_kind`):
 *
 * - `claim`: the record as the claim made it, and its hold (`amount` = the hold's amount), whose
 *   reserve the claim's transaction took on the account;
 * - `money`: the one capture or release of the request's hold (`amount` charged, `released` taken
 *   off `held`), moved on the account by the same transaction, with the outcome it records. A
 *   money event without a payload is a **guard**: a resolution made on the tables directly (a
 *   settle, an operator, the reconciler, a task) takes the request's one money slot so that a
 *   logged finish racing it finds the slot taken; it moves nothing and records nothing;
 * - `outcome`: a finish that moves no money (`awaiting_funds`, `submission_unknown`, a record
 *   without a hold), with the outcome it records.
 *
 * What they carry beyond the indexed columns is the JSON `payload`, in the shapes below.
 */

/** A claim's record, as `requests` will hold it (the operator's review columns start empty). */
export type ClaimedRecord = Omit<
  RequestTable,
  | 'usage_flag'
  | 'usage_reviewed_at'
  | 'usage_review'
  | 'channel'
  | 'channel_attempts'
  | 'channel_cost'
  | 'line_items'
>;

export interface ClaimPayload {
  readonly record: ClaimedRecord;
  /** The hold the claim reserved (`events.amount` is its amount), or null for none. */
  readonly hold: {
    readonly id: string;
    readonly priceVersion: string;
    readonly budgetKeyId: string | null;
  } | null;
}

/** The record's columns a finish writes (requests/outcome-columns.ts), `status` and `amount` typed. */
export type OutcomeRecord = Partial<RequestTable> & {
  readonly status: RequestStatus;
  readonly amount: number | null;
};

export interface MoneyPayload {
  readonly holdId: string;
  readonly move: 'capture' | 'release';
  /** The journal entry's reason. */
  readonly reason: string;
  readonly outcome: OutcomeRecord;
}

export interface OutcomePayload {
  readonly outcome: OutcomeRecord;
}

export const claimPayloadOf = (event: LoggedEvent): ClaimPayload =>
  JSON.parse(event.payload ?? 'null') as ClaimPayload;
/** A money event's payload, or null for a guard (see above). */
export const moneyPayloadOf = (event: LoggedEvent): MoneyPayload | null =>
  event.payload === null ? null : (JSON.parse(event.payload) as MoneyPayload);
export const outcomePayloadOf = (event: LoggedEvent): OutcomePayload =>
  JSON.parse(event.payload ?? 'null') as OutcomePayload;

/**
 * Takes request `requestId`'s one money slot for a resolution made on the tables (see above), in
 * the resolution's transaction and before it moves anything. `false`: the slot is taken (a logged
 * finish moved the money, or is moving it and has committed meanwhile): the hold is not this
 * writer's to resolve.
 */
export async function takeMoneySlot(
  trx: Kysely<Database>,
  input: { requestId: string; accountId: string; now: number },
): Promise<boolean> {
  const taken = await sql`
    insert into events (request_id, kind, account_id, key_id, idempotency_key, amount, released,
                        payload, created_at)
    values (${input.requestId}, 'money', ${input.accountId}, null, null, null, null, null,
            ${input.now})
    on conflict (request_id, kind) do nothing`.execute(trx);
  return taken.numAffectedRows === 1n;
}

/** Gives back a slot `takeMoneySlot` took, when the resolution it guarded moved nothing. */
export async function giveBackMoneySlot(trx: Kysely<Database>, requestId: string): Promise<void> {
  await trx
    .deleteFrom('events')
    .where('request_id', '=', requestId)
    .where('kind', '=', 'money')
    .where('payload', 'is', null)
    .execute();
}
