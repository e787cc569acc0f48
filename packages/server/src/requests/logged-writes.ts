import { sql, type Kysely } from 'kysely';
import type {
  ClaimedRecord,
  ClaimPayload,
  MoneyPayload,
  OutcomePayload,
} from '../events/request-events.js';
import { preparedQuery } from '../store/prepared-query.js';
import type { Database } from '../store/schema.js';

// The three statements of the request path, compiled once (store/prepared-query.ts): a raw
// statement's template wrapped as the compilable the prepared query builds.
const insertClaim = preparedQuery<{
  requestId: string;
  accountId: string;
  keyId: string;
  idempotencyKey: string;
  amount: number | null;
  payload: string;
  createdAt: number;
}>((db, slot) => ({
  compile: () =>
    sql`insert into events (request_id, kind, account_id, key_id, idempotency_key, amount,
                            released, payload, created_at)
        values (${slot.requestId}, 'claim', ${slot.accountId}, ${slot.keyId},
                ${slot.idempotencyKey}, ${slot.amount}, null, ${slot.payload}, ${slot.createdAt})
        on conflict (key_id, idempotency_key) where kind = 'claim' do nothing`.compile(db),
}));
const insertMoney = preparedQuery<
  {
    requestId: string;
    accountId: string;
    amount: number;
    holdId: string;
    payload: string;
    now: number;
  },
  { released: string | number }
>((db, slot) => ({
  compile: () =>
    sql<{ released: string | number }>`
      insert into events (request_id, kind, account_id, key_id, idempotency_key, amount, released,
                          payload, created_at)
      select ${slot.requestId}, 'money', ${slot.accountId}, null, null, ${slot.amount},
             held.amount, ${slot.payload}, ${slot.now}
        from (select amount from events where request_id = ${slot.requestId} and kind = 'claim'
              union all
              select amount from holds where id = ${slot.holdId} and state = 'open') held
       where held.amount is not null
       limit 1
      on conflict (request_id, kind) do nothing
      returning released`.compile(db),
}));
const insertOutcome = preparedQuery<{
  requestId: string;
  accountId: string;
  payload: string;
  now: number;
}>((db, slot) => ({
  compile: () =>
    sql`insert into events (request_id, kind, account_id, key_id, idempotency_key, amount,
                            released, payload, created_at)
        select ${slot.requestId}, 'outcome', ${slot.accountId}, null, null, null, null,
               ${slot.payload}, ${slot.now}
         where not exists (select 1 from events where request_id = ${slot.requestId}
                              and kind = 'money')
           and not exists (select 1 from requests where id = ${slot.requestId}
                              and status not in ('processing', 'submission_unknown'))
        on conflict (request_id, kind) do nothing`.compile(db),
}));

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
  const inserted = await insertClaim(trx, {
    requestId: record.id,
    accountId: record.account_id,
    keyId: record.key_id,
    idempotencyKey: record.idempotency_key,
    amount: hold?.amount ?? null,
    payload: JSON.stringify(payload),
    createdAt: record.created_at,
  });
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
  const { rows } = await insertMoney(trx, {
    requestId: input.requestId,
    accountId: input.accountId,
    amount: input.amount,
    holdId: input.payload.holdId,
    payload: JSON.stringify(input.payload),
    now: input.now,
  });
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
  const inserted = await insertOutcome(trx, {
    requestId: input.requestId,
    accountId: input.accountId,
    payload: JSON.stringify(input.payload),
    now: input.now,
  });
  return inserted.numAffectedRows === 1n;
}
