import { sql } from 'kysely';
import { maxBalanceBeforeCredit } from './money.js';
import { appendJournal, type Executor, type LedgerEffects } from './journal.js';

export type CreditOutcome =
  | { readonly kind: 'credited' }
  /** The balance would pass MAX_BALANCE_MICRO_YUAN: nothing changed; `balance` is the current one. */
  | { readonly kind: 'balance_limit'; readonly balance: number };

/**
 * Adds `amount` to the balance, unless the result would exceed MAX_BALANCE_MICRO_YUAN (one
 * guarded update: `balance <= MAX - amount`, computed exactly in JavaScript, so the database
 * never adds past the bound). What the account owes is paid from the credit first (`payOwed`).
 * Call inside the transaction that records the top-up row, and roll it back on `balance_limit`.
 */
export async function credit(
  trx: Executor,
  effects: LedgerEffects,
  input: {
    accountId: string;
    amount: number;
    kind: 'topup' | 'redemption';
    topupId: string;
    reason: string;
  },
): Promise<CreditOutcome> {
  const updated = await trx
    .updateTable('accounts')
    .set({ balance: sql`balance + ${input.amount}` })
    .where('id', '=', input.accountId)
    .where('balance', '<=', maxBalanceBeforeCredit(input.amount))
    .returning('owed')
    .executeTakeFirst();
  if (updated === undefined) {
    const account = await trx
      .selectFrom('accounts')
      .select('balance')
      .where('id', '=', input.accountId)
      .executeTakeFirstOrThrow();
    return { kind: 'balance_limit', balance: account.balance };
  }
  await appendJournal(trx, effects, {
    accountId: input.accountId,
    kind: input.kind,
    balanceDelta: input.amount,
    heldDelta: 0,
    topupId: input.topupId,
    reason: input.reason,
  });
  if (updated.owed > 0)
    await payOwed(trx, effects, { accountId: input.accountId, from: input.reason });
  return { kind: 'credited' };
}

/**
 * The account's money columns, its row locked until the transaction ends (an update that
 * changes nothing; SQLite's writers are serialised anyway): what is read stays true while the
 * transaction decides from it. Throws when there is no such account. In a transaction.
 */
export async function lockAccountMoney(
  trx: Executor,
  accountId: string,
): Promise<{ balance: number; held: number; owed: number }> {
  const account = await trx
    .updateTable('accounts')
    .set((eb) => ({ owed: eb.ref('owed') }))
    .where('id', '=', accountId)
    .returning(['balance', 'held', 'owed'])
    .executeTakeFirst();
  if (account === undefined) throw new Error(`no account ${accountId}`);
  return account;
}

/** What a refund did to its account: taken from the balance now, and added to `owed`. */
export interface RefundTaken {
  readonly taken: number;
  readonly owed: number;
}

/**
 * Takes back `amount` of a refunded payment: what is available (balance − held) now, and the
 * rest added to the account's `owed`, which `payOwed` takes from the next money that becomes
 * available (a released hold, the unused part of a capture, a credit). A refund alone therefore
 * never drives a balance below zero nor eats into open holds, and money held at the time of the
 * refund cannot be kept by releasing it later. One guarded update on the locked row (the
 * database confirms the available amount it was computed from) and one `refund` journal entry
 * (balance delta −taken, owed delta +owed); the ledger check replays `owed` and matches refunds
 * to the payment orders. In a transaction.
 */
export async function takeRefund(
  trx: Executor,
  effects: LedgerEffects,
  input: { accountId: string; amount: number; reason: string },
): Promise<RefundTaken> {
  if (input.amount <= 0) return { taken: 0, owed: 0 };
  const account = await lockAccountMoney(trx, input.accountId);
  const available = account.balance - account.held;
  const taken = Math.max(0, Math.min(input.amount, available));
  const owed = input.amount - taken;
  const updated = await trx
    .updateTable('accounts')
    .set({ balance: sql`balance - ${taken}`, owed: sql`owed + ${owed}` })
    .where('id', '=', input.accountId)
    .where(sql<boolean>`balance - held = ${available}`)
    .executeTakeFirst();
  if (updated.numUpdatedRows !== 1n)
    throw new Error(`the available balance of ${input.accountId} changed during a refund`);
  await appendJournal(trx, effects, {
    accountId: input.accountId,
    kind: 'refund',
    balanceDelta: -taken,
    heldDelta: 0,
    owedDelta: owed,
    reason: input.reason,
  });
  return { taken, owed };
}

/**
 * Pays what the account owes (`owed`, refunds not yet taken back) from what is available now:
 * `min(owed, balance − held)`, by one guarded update (`owed >= paid and balance - held >=
 * paid`) and one `refund` journal entry (balance and owed deltas both −paid). Every movement
 * that makes money available calls it in its own transaction, after its update (which locked
 * the row) told it the account owes: so an account that owes never has anything available, and
 * the freed money cannot be reserved first. `from` says what freed it. Returns what was paid.
 */
export async function payOwed(
  trx: Executor,
  effects: LedgerEffects,
  input: { accountId: string; from: string },
): Promise<number> {
  const account = await trx
    .selectFrom('accounts')
    .select(['balance', 'held', 'owed'])
    .where('id', '=', input.accountId)
    .executeTakeFirstOrThrow();
  const paid = Math.min(account.owed, account.balance - account.held);
  if (paid <= 0) return 0;
  const updated = await trx
    .updateTable('accounts')
    .set({ balance: sql`balance - ${paid}`, owed: sql`owed - ${paid}` })
    .where('id', '=', input.accountId)
    .where('owed', '>=', paid)
    .where(sql<boolean>`balance - held >= ${paid}`)
    .executeTakeFirst();
  if (updated.numUpdatedRows !== 1n)
    throw new Error(`what ${input.accountId} owes changed while it was being paid`);
  await appendJournal(trx, effects, {
    accountId: input.accountId,
    kind: 'refund',
    balanceDelta: -paid,
    heldDelta: 0,
    owedDelta: -paid,
    reason: `owed refund paid from ${input.from}`,
  });
  return paid;
}
