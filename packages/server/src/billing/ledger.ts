import { sql, type Kysely } from 'kysely';
import type { Database, JournalKind } from '../store/schema.js';
import type { Clock, IdGenerator } from '../util/effects.js';

/**
 * The ledger, after TigerBeetle's two-phase transfers. An account has `balance` and `held`;
 * `available = balance - held` is never negative. Every function here takes a transaction (or
 * the database for single statements) and moves money only through guarded updates, and every
 * movement appends exactly one journal row whose deltas replay to the account's columns.
 */
export type Executor = Kysely<Database>;

export interface LedgerEffects {
  readonly clock: Clock;
  readonly ids: IdGenerator;
}

export interface JournalEntry {
  accountId: string;
  kind: JournalKind;
  balanceDelta: number;
  heldDelta: number;
  reason: string;
  holdId?: string;
  requestId?: string;
  topupId?: string;
}

export async function appendJournal(
  executor: Executor,
  effects: LedgerEffects,
  entry: JournalEntry,
): Promise<void> {
  await executor
    .insertInto('journal')
    .values({
      id: effects.ids.next('jrn'),
      account_id: entry.accountId,
      kind: entry.kind,
      balance_delta: entry.balanceDelta,
      held_delta: entry.heldDelta,
      hold_id: entry.holdId ?? null,
      request_id: entry.requestId ?? null,
      topup_id: entry.topupId ?? null,
      reason: entry.reason,
      created_at: effects.clock.now(),
    })
    .execute();
}

/** Adds `amount` to the balance. Call inside the transaction that records the top-up row. */
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
): Promise<void> {
  await trx
    .updateTable('accounts')
    .set({ balance: sql`balance + ${input.amount}` })
    .where('id', '=', input.accountId)
    .execute();
  await appendJournal(trx, effects, {
    accountId: input.accountId,
    kind: input.kind,
    balanceDelta: input.amount,
    heldDelta: 0,
    topupId: input.topupId,
    reason: input.reason,
  });
}

/**
 * Reserves `amount` with one guarded update. Returns the hold id, or `null` when the amount is
 * not available (nothing changed). Must run inside a transaction.
 */
export async function placeHold(
  trx: Executor,
  effects: LedgerEffects,
  input: {
    accountId: string;
    amount: number;
    requestId: string;
    priceVersion: string;
    holdId?: string;
  },
): Promise<string | null> {
  const updated = await trx
    .updateTable('accounts')
    .set({ held: sql`held + ${input.amount}` })
    .where('id', '=', input.accountId)
    .where(sql<boolean>`balance - held >= ${input.amount}`)
    .executeTakeFirst();
  if (updated.numUpdatedRows !== 1n) return null;
  const holdId = input.holdId ?? effects.ids.next('hold');
  await trx
    .insertInto('holds')
    .values({
      id: holdId,
      account_id: input.accountId,
      request_id: input.requestId,
      amount: input.amount,
      state: 'open',
      captured_amount: null,
      price_version: input.priceVersion,
      created_at: effects.clock.now(),
      resolved_at: null,
    })
    .execute();
  await appendJournal(trx, effects, {
    accountId: input.accountId,
    kind: 'hold',
    balanceDelta: 0,
    heldDelta: input.amount,
    holdId,
    requestId: input.requestId,
    reason: `reserve for ${input.requestId}`,
  });
  return holdId;
}

export type CaptureOutcome = 'captured' | 'insufficient_funds' | 'already_resolved';

/**
 * Resolves an open hold by charging `amount` (which may exceed the hold: the difference must be
 * available right now, else `insufficient_funds` and nothing changes). The hold's state moves
 * from `open` exactly once, guarded in SQL, so a concurrent second capture finds it resolved.
 * Must run inside a transaction.
 */
export async function captureHold(
  trx: Executor,
  effects: LedgerEffects,
  input: { holdId: string; amount: number; reason: string },
): Promise<CaptureOutcome> {
  // Claim the hold first: of two concurrent captures, the second blocks on this row and then
  // finds it no longer open.
  const hold = await trx
    .updateTable('holds')
    .set({ state: 'captured', captured_amount: input.amount, resolved_at: effects.clock.now() })
    .where('id', '=', input.holdId)
    .where('state', '=', 'open')
    .returning(['account_id', 'amount', 'request_id'])
    .executeTakeFirst();
  if (hold === undefined) return 'already_resolved';
  const extra = Math.max(0, input.amount - hold.amount);
  const charged = await trx
    .updateTable('accounts')
    .set({ balance: sql`balance - ${input.amount}`, held: sql`held - ${hold.amount}` })
    .where('id', '=', hold.account_id)
    .where(sql<boolean>`balance - held >= ${extra}`)
    .executeTakeFirst();
  if (charged.numUpdatedRows !== 1n) {
    // Undo the claim inside this transaction; no other transaction ever saw it.
    await trx
      .updateTable('holds')
      .set({ state: 'open', captured_amount: null, resolved_at: null })
      .where('id', '=', input.holdId)
      .execute();
    return 'insufficient_funds';
  }
  await appendJournal(trx, effects, {
    accountId: hold.account_id,
    kind: 'capture',
    balanceDelta: -input.amount,
    heldDelta: -hold.amount,
    holdId: input.holdId,
    requestId: hold.request_id,
    reason: input.reason,
  });
  return 'captured';
}

/** Releases an open hold in full. Returns false when it was already resolved. In a transaction. */
export async function releaseHold(
  trx: Executor,
  effects: LedgerEffects,
  input: { holdId: string; reason: string },
): Promise<boolean> {
  const resolved = await trx
    .updateTable('holds')
    .set({ state: 'released', resolved_at: effects.clock.now() })
    .where('id', '=', input.holdId)
    .where('state', '=', 'open')
    .returning(['account_id', 'amount', 'request_id'])
    .executeTakeFirst();
  if (resolved === undefined) return false;
  await trx
    .updateTable('accounts')
    .set({ held: sql`held - ${resolved.amount}` })
    .where('id', '=', resolved.account_id)
    .execute();
  await appendJournal(trx, effects, {
    accountId: resolved.account_id,
    kind: 'release',
    balanceDelta: 0,
    heldDelta: -resolved.amount,
    holdId: input.holdId,
    requestId: resolved.request_id,
    reason: input.reason,
  });
  return true;
}
