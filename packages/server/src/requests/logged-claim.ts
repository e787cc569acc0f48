import type { Kysely } from 'kysely';
import { reserveForHold } from '../billing/ledger.js';
import type { LedgerEffects } from '../billing/journal.js';
import { ApiError } from '../errors/api-error.js';
import type { Database } from '../store/schema.js';
import { appendClaim } from './logged-writes.js';
import type { RecordRow } from './record-view.js';
import { insufficientFunds, overBudget } from './request-errors.js';
import type { NewRecord, RequestStore } from './request-store.js';
import type { Claim, RequestIdentity } from './request-types.js';

/**
 * A plain claim with `accounting.event_log` (a hold, no assets, no work inside: decision 0019):
 * its event and the reserve on the account, in one transaction; the record, the hold and the
 * journal entry are the projector's to write (record-projection.ts). `existing`: the idempotency
 * key is taken, by a claim in the log or a record in `requests`, and nothing was written.
 */
export async function claimLogged(
  db: Kysely<Database>,
  effects: LedgerEffects,
  records: RequestStore,
  identity: RequestIdentity,
  record: NewRecord,
  hold: { holdId: string; amount: number; priceVersion: string },
): Promise<Claim | { kind: 'existing'; row: RecordRow }> {
  const budgetKeyId = identity.principal.budgeted ? identity.principal.keyId : null;
  const { keyId } = identity.principal;
  try {
    return await db.transaction().execute(async (trx): Promise<Claim> => {
      const claimed = await appendClaim(trx, record, {
        id: hold.holdId,
        amount: hold.amount,
        priceVersion: hold.priceVersion,
        budgetKeyId,
      });
      // Asked after the insert, never before (logged-writes.ts `appendClaim`).
      const applied = claimed
        ? await trx
            .selectFrom('requests')
            .select('id')
            .where('key_id', '=', keyId)
            .where('idempotency_key', '=', identity.idempotencyKey)
            .executeTakeFirst()
        : undefined;
      if (!claimed || applied !== undefined) {
        const row = await records.byIdempotencyKey(keyId, identity.idempotencyKey, trx);
        if (row === undefined || row.id === identity.requestId)
          throw new Error('idempotency conflict without a record');
        throw new ExistingRecord(row);
      }
      const reserved = await reserveForHold(trx, effects, {
        accountId: identity.principal.accountId,
        amount: hold.amount,
        budgetKeyId,
      });
      // Refused: roll the claim back too, so the same idempotency key may be sent again later.
      if (reserved.kind === 'insufficient_funds') throw insufficientFunds(hold.amount);
      if (reserved.kind === 'over_budget') throw overBudget(hold.amount, reserved);
      return { kind: 'claimed', holdId: hold.holdId };
    });
  } catch (error) {
    if (error instanceof ExistingRecord) return { kind: 'existing', row: error.row };
    if (error instanceof ApiError) return { kind: 'refused', error };
    throw error;
  }
}

/** Rolls the claim's transaction back when its idempotency key turned out to be taken. */
class ExistingRecord extends Error {
  constructor(readonly row: RecordRow) {
    super(`the idempotency key is taken by ${row.id}`);
  }
}
