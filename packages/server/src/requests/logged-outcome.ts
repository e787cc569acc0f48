import type { Kysely } from 'kysely';
import { chargeForCapture, unholdForRelease } from '../billing/ledger.js';
import { type LedgerEffects } from '../billing/journal.js';
import type { MoneyPayload, OutcomeRecord } from '../events/request-events.js';
import type { Database } from '../store/schema.js';
import { appendMoney, appendOutcome, withdrawMoney } from './logged-writes.js';
import type { RequestIdentity } from './request-types.js';

/** What a logged finish did: moved the money, kept the hold awaiting funds, or was refused. */
export type LoggedFinish = 'moved' | 'awaiting_funds' | 'refused';

/**
 * A request's finish with `accounting.event_log` (decision 0019): one event and the account's
 * movement, in one transaction; the record, hold and journal rows are the projector's to write
 * (record-projection.ts). The guards are the events' (logged-writes.ts): the hold must still be
 * open and its money slot free, so a second finish, the sweeper's successor or an operator who
 * resolved it first leaves this one `refused`, with nothing moved.
 *
 * - `release`: a failure; the whole hold goes back (`outcome` is `failed`).
 * - `capture`: `amount` charged; when the part above the hold is not available, nothing moves and
 *   the record awaits funds instead (`awaitingFunds` is that outcome).
 * - no hold, or an outcome that moves no money (`submission_unknown`): an `outcome` event.
 */
export async function finishLogged(
  db: Kysely<Database>,
  effects: LedgerEffects,
  identity: RequestIdentity,
  finish:
    | { move: 'release'; holdId: string; reason: string; outcome: OutcomeRecord }
    | {
        move: 'capture';
        holdId: string;
        amount: number;
        reason: string;
        outcome: OutcomeRecord;
        awaitingFunds: OutcomeRecord;
      }
    | { move: 'none'; outcome: OutcomeRecord },
): Promise<LoggedFinish> {
  const accountId = identity.principal.accountId;
  const budgetKeyId = identity.principal.budgeted ? identity.principal.keyId : null;
  const now = effects.clock.now();
  const recordOnly = async (trx: Kysely<Database>, outcome: OutcomeRecord) =>
    appendOutcome(trx, { requestId: identity.requestId, accountId, payload: { outcome }, now });
  return db.transaction().execute(async (trx): Promise<LoggedFinish> => {
    if (finish.move === 'none')
      return (await recordOnly(trx, finish.outcome)) ? 'moved' : 'refused';
    const payload: MoneyPayload = {
      holdId: finish.holdId,
      move: finish.move,
      reason: finish.reason,
      outcome: finish.outcome,
    };
    const amount = finish.move === 'capture' ? finish.amount : 0;
    const held = await appendMoney(trx, {
      requestId: identity.requestId,
      accountId,
      amount,
      payload,
      now,
    });
    if (held === null) return 'refused';
    const movement = { accountId, held, budgetKeyId, holdId: finish.holdId };
    if (finish.move === 'release') {
      await unholdForRelease(trx, effects, movement);
      return 'moved';
    }
    if ((await chargeForCapture(trx, effects, { ...movement, amount })) === 'captured')
      return 'moved';
    // More than is available: nothing moves, the hold stays for a settle.
    await withdrawMoney(trx, identity.requestId);
    return (await recordOnly(trx, finish.awaitingFunds)) ? 'awaiting_funds' : 'refused';
  });
}
