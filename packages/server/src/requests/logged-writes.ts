import { sql, type Kysely } from 'kysely';
import type {
  ClaimedRecord,
  ClaimPayload,
  MoneyPayload,
  OutcomePayload,
} from '../events/request-events.js';
import type { Database } from '../store/schema.js';

/**
 * The request path's writes to the event log when `accounting.event_log` is on (decision 0019):
 * each one row of `events`, the guards in the statement itself. The account's side of each is
 * the caller's, in the same transaction (billing/ledger.ts `reserveForHold`, `chargeForCapture`,
 * `unholdForRelease`).
 */

/**
 * The claim of an idempotency key: `false` when the key already has a claim in the log (the
 * unique `events_claim_key`). The caller then also asks `requests` (an applied claim's event is
 * gone from the log: decision 0019, point 3), after this insert, never before.
 */
export async function appendClaim(
  trx: Kysely<Database>,
  record: ClaimedRecord,
  hold: (ClaimPayload['hold'] & { amount: number }) | null,
): Promise<boolean> {
  const payload: ClaimPayload = {
    record,
    hold:
      hold === null
        ? null
        : { id: hold.id, priceVersion: hold.priceVersion, budgetKeyId: hold.budgetKeyId },
  };
  const inserted = await sql`
    insert into events (request_id, kind, account_id, key_id, idempotency_key, amount, released,
                        payload, created_at)
    values (${record.id}, 'claim', ${record.account_id}, ${record.key_id},
            ${record.idempotency_key}, ${hold?.amount ?? null}, null, ${JSON.stringify(payload)},
            ${record.created_at})
    on conflict (key_id, idempotency_key) where kind = 'claim' do nothing`.execute(trx);
  return inserted.numAffectedRows === 1n;
}

/**
 * The request's one money movement, guarded in the statement: the hold must be open, as a pending
 * claim in the log or as an open row of `holds`, and the request's money slot free (the unique
 * `events_request_kind`; a resolution on the tables takes it too). Resolves with the hold's
 * amount (what the movement takes off `held`), or null: someone else resolved it.
 */
export async function appendMoney(
  trx: Kysely<Database>,
  input: {
    requestId: string;
    accountId: string;
    amount: number;
    payload: MoneyPayload;
    now: number;
  },
): Promise<number | null> {
  const { rows } = await sql<{ released: string | number }>`
    insert into events (request_id, kind, account_id, key_id, idempotency_key, amount, released,
                        payload, created_at)
    select ${input.requestId}, 'money', ${input.accountId}, null, null, ${input.amount},
           held.amount, ${JSON.stringify(input.payload)}, ${input.now}
      from (select amount from events where request_id = ${input.requestId} and kind = 'claim'
            union all
            select amount from holds where id = ${input.payload.holdId} and state = 'open') held
     where held.amount is not null
     limit 1
    on conflict (request_id, kind) do nothing
    returning released`.execute(trx);
  const released = rows[0]?.released;
  return released === undefined ? null : Number(released);
}

/** Takes back a money event this transaction wrote, when its account refused the movement. */
export async function withdrawMoney(trx: Kysely<Database>, requestId: string): Promise<void> {
  await trx
    .deleteFrom('events')
    .where('request_id', '=', requestId)
    .where('kind', '=', 'money')
    .execute();
}

/**
 * A finish that moves no money, guarded in the statement: not after the request's money moved
 * (a money event in the log), nor on a record that is final in `requests` (only `processing` and
 * `submission_unknown` take a finish). `false`: refused.
 */
export async function appendOutcome(
  trx: Kysely<Database>,
  input: { requestId: string; accountId: string; payload: OutcomePayload; now: number },
): Promise<boolean> {
  const inserted = await sql`
    insert into events (request_id, kind, account_id, key_id, idempotency_key, amount, released,
                        payload, created_at)
    select ${input.requestId}, 'outcome', ${input.accountId}, null, null, null, null,
           ${JSON.stringify(input.payload)}, ${input.now}
     where not exists (select 1 from events where request_id = ${input.requestId} and kind = 'money')
       and not exists (select 1 from requests where id = ${input.requestId}
                          and status not in ('processing', 'submission_unknown'))
    on conflict (request_id, kind) do nothing`.execute(trx);
  return inserted.numAffectedRows === 1n;
}
