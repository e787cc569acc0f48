import { sql, type Kysely, type RawBuilder } from 'kysely';
import { preparedQuery } from '../store/prepared-query.js';
import type { Database, JournalKind, JournalTable } from '../store/schema.js';
import type { Clock, IdGenerator } from '../util/effects.js';
import { maxBalanceBeforeCredit } from './money.js';
import {
  budgetWindowStartSql,
  spentInWindowSql,
  windowStartsOf,
  type BudgetRefusal,
  type WindowSlots,
  refusalOf,
} from '../budgets/budget-ledger.js';

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
  /** Where budget windows turn over (IANA zone); Asia/Shanghai when not given. */
  readonly budgetTimeZone?: string;
}

export interface JournalEntry {
  accountId: string;
  kind: JournalKind;
  balanceDelta: number;
  heldDelta: number;
  /** Change of the account's `owed`; refunds only (0 when absent). */
  owedDelta?: number;
  reason: string;
  holdId?: string;
  requestId?: string;
  topupId?: string;
}

// The statements of every request's hold and capture, compiled once (store/prepared-query.ts).
export const insertJournal = preparedQuery<JournalTable>((db, slot) =>
  db.insertInto('journal').values({
    id: slot.id,
    account_id: slot.account_id,
    kind: slot.kind,
    balance_delta: slot.balance_delta,
    held_delta: slot.held_delta,
    owed_delta: slot.owed_delta,
    hold_id: slot.hold_id,
    request_id: slot.request_id,
    topup_id: slot.topup_id,
    reason: slot.reason,
    created_at: slot.created_at,
  }),
);
// The account's budget (if any) is checked by the same guarded update: its open holds are `held`,
// its spend in the current window `budget_spent` (budgets/budget-ledger.ts).
/**
 * A money amount in a guarded update: a value, or an expression of the statement it is part of
 * (requests/one-statement-money.ts sums the rows of its own earlier parts).
 */
export type AmountOf = number | RawBuilder<number>;

/** The guarded update of a hold's reserve on its account (alone, batched or in one statement). */
export function reserveAvailableUpdate(
  db: Executor,
  slot: { accountId: string; amount: AmountOf } & WindowSlots,
) {
  return db
    .updateTable('accounts')
    .set({
      held: sql`held + ${slot.amount}`,
      budget_spent: spentInWindowSql(slot),
      budget_window_start: budgetWindowStartSql(slot),
    })
    .where('id', '=', slot.accountId)
    .where(sql<boolean>`balance - held >= ${slot.amount}`)
    .where(
      sql<boolean>`(budget_limit is null or ${spentInWindowSql(slot)} + held + ${slot.amount} <= budget_limit)`,
    );
}
export const reserveAvailable = preparedQuery<{ accountId: string; amount: number } & WindowSlots>(
  reserveAvailableUpdate,
);
export const reserveKeyBudget = preparedQuery<{ keyId: string; amount: number } & WindowSlots>(
  (db, slot) =>
    db
      .updateTable('api_keys')
      .set({
        budget_held: sql`budget_held + ${slot.amount}`,
        budget_spent: spentInWindowSql(slot),
        budget_window_start: budgetWindowStartSql(slot),
      })
      .where('id', '=', slot.keyId)
      .where(keyBudgetFits(slot)),
);
/**
 * The guard of a reserve of `amount` against a key's budget (alone, or a batch's sum for the key
 * in one statement: requests/batched-accounts.ts).
 */
export function keyBudgetFits(slot: { amount: AmountOf } & WindowSlots): RawBuilder<boolean> {
  return sql<boolean>`(budget_limit is null or ${spentInWindowSql(slot)} + budget_held + ${slot.amount} <= budget_limit)`;
}
const insertOpenHold = preparedQuery<{
  id: string;
  accountId: string;
  requestId: string;
  amount: number;
  priceVersion: string;
  createdAt: number;
  budgetKeyId: string | null;
}>((db, slot) =>
  db.insertInto('holds').values({
    id: slot.id,
    account_id: slot.accountId,
    request_id: slot.requestId,
    amount: slot.amount,
    state: 'open',
    captured_amount: null,
    price_version: slot.priceVersion,
    created_at: slot.createdAt,
    resolved_at: null,
    budget_key_id: slot.budgetKeyId,
  }),
);
interface ResolvedHold {
  account_id: string;
  amount: number;
  request_id: string;
  budget_key_id: string | null;
}
const claimOpenHoldAsCaptured = preparedQuery<
  { holdId: string; amount: number; now: number },
  ResolvedHold
>((db, slot) =>
  db
    .updateTable('holds')
    .set({ state: 'captured', captured_amount: slot.amount, resolved_at: slot.now })
    .where('id', '=', slot.holdId)
    .where('state', '=', 'open')
    .returning(['account_id', 'amount', 'request_id', 'budget_key_id']),
);
/**
 * The guarded update of a capture on its account: `amount` charged, `held` released, and the
 * charge above the hold (`extra`) must be available (alone, batched or in one statement).
 */
export function chargeHeldUpdate(
  db: Executor,
  slot: { accountId: string; amount: AmountOf; held: AmountOf; extra: number } & WindowSlots,
) {
  return db
    .updateTable('accounts')
    .set({
      balance: sql`balance - ${slot.amount}`,
      held: sql`held - ${slot.held}`,
      budget_spent: sql`${spentInWindowSql(slot)} + ${slot.amount}`,
      budget_window_start: budgetWindowStartSql(slot),
    })
    .where('id', '=', slot.accountId)
    .where(sql<boolean>`balance - held >= ${slot.extra}`);
}
export const chargeHeld = preparedQuery<
  {
    accountId: string;
    amount: number;
    held: number;
    extra: number;
  } & WindowSlots
>(chargeHeldUpdate);
/** `chargeHeld` answering the account's `owed`: a capture below its hold frees money it pays. */
const chargeHeldOwing = preparedQuery<
  {
    accountId: string;
    amount: number;
    held: number;
    extra: number;
  } & WindowSlots,
  Owing
>((db, slot) => chargeHeldUpdate(db, slot).returning('owed'));
/** A resolved hold gives back what it reserved against its key's budget; a capture counts. */
export const resolveKeyBudget = preparedQuery<
  { keyId: string; held: number; spent: number } & WindowSlots
>((db, slot) =>
  db
    .updateTable('api_keys')
    .set({
      budget_held: sql`budget_held - ${slot.held}`,
      budget_spent: sql`${spentInWindowSql(slot)} + ${slot.spent}`,
      budget_window_start: budgetWindowStartSql(slot),
    })
    .where('id', '=', slot.keyId),
);
const claimOpenHoldAsReleased = preparedQuery<{ holdId: string; now: number }, ResolvedHold>(
  (db, slot) =>
    db
      .updateTable('holds')
      .set({ state: 'released', resolved_at: slot.now })
      .where('id', '=', slot.holdId)
      .where('state', '=', 'open')
      .returning(['account_id', 'amount', 'request_id', 'budget_key_id']),
);
const unholdAmount = preparedQuery<{ accountId: string; amount: number }, Owing>((db, slot) =>
  db
    .updateTable('accounts')
    .set({ held: sql`held - ${slot.amount}` })
    .where('id', '=', slot.accountId)
    .returning('owed'),
);
/** What a movement that frees money answers, so that only an account that owes pays. */
interface Owing {
  owed: number;
}

export async function appendJournal(
  executor: Executor,
  effects: LedgerEffects,
  entry: JournalEntry,
): Promise<void> {
  await insertJournal(executor, journalRow(effects, entry));
}

/** The journal row of one movement (new id, now); batched writers insert many at once. */
export function journalRow(effects: LedgerEffects, entry: JournalEntry): JournalTable {
  return {
    id: effects.ids.next('jrn'),
    account_id: entry.accountId,
    kind: entry.kind,
    balance_delta: entry.balanceDelta,
    held_delta: entry.heldDelta,
    owed_delta: entry.owedDelta ?? 0,
    hold_id: entry.holdId ?? null,
    request_id: entry.requestId ?? null,
    topup_id: entry.topupId ?? null,
    reason: entry.reason,
    created_at: effects.clock.now(),
  };
}

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

export type HoldOutcome =
  | { readonly kind: 'placed'; readonly holdId: string }
  /** The account's available balance is short: nothing changed. */
  | { readonly kind: 'insufficient_funds' }
  /** The hold would cross a budget's remaining amount: nothing changed (once rolled back). */
  | ({ readonly kind: 'over_budget' } & BudgetRefusal);

/**
 * Reserves `amount` with one guarded update that also checks the account's budget, and one more
 * for the key's budget when `budgetKeyId` names a key that has one (the caller knows from
 * authentication). Must run inside a transaction, and the caller must roll it back on any
 * outcome but `placed` (the account's update may already have happened).
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
    /** The key whose budget this hold also reserves against, or null/absent. */
    budgetKeyId?: string | null;
  },
): Promise<HoldOutcome> {
  const windows = windowStartsOf(effects);
  const updated = await reserveAvailable(trx, {
    accountId: input.accountId,
    amount: input.amount,
    ...windows,
  });
  if (updated.numAffectedRows !== 1n)
    return refusalOf(trx, effects, { scope: 'account', id: input.accountId, amount: input.amount });
  const budgetKeyId = input.budgetKeyId ?? null;
  if (budgetKeyId !== null) {
    const reserved = await reserveKeyBudget(trx, {
      keyId: budgetKeyId,
      amount: input.amount,
      ...windows,
    });
    if (reserved.numAffectedRows !== 1n)
      return refusalOf(trx, effects, { scope: 'key', id: budgetKeyId, amount: input.amount });
  }
  const holdId = input.holdId ?? effects.ids.next('hold');
  await insertOpenHold(trx, {
    id: holdId,
    accountId: input.accountId,
    requestId: input.requestId,
    amount: input.amount,
    priceVersion: input.priceVersion,
    createdAt: effects.clock.now(),
    budgetKeyId,
  });
  await appendJournal(trx, effects, {
    accountId: input.accountId,
    kind: 'hold',
    balanceDelta: 0,
    heldDelta: input.amount,
    holdId,
    requestId: input.requestId,
    reason: `reserve for ${input.requestId}`,
  });
  return { kind: 'placed', holdId };
}

export type CaptureOutcome = 'captured' | 'insufficient_funds' | 'already_resolved';

/**
 * Resolves an open hold by charging `amount` (which may exceed the hold: the difference must be
 * available right now, else `insufficient_funds` and nothing changes). The hold's state moves
 * from `open` exactly once, guarded in SQL, so a concurrent second capture finds it resolved.
 * The unused part of the hold pays what the account owes (`payOwed`). Must run inside a
 * transaction.
 */
export async function captureHold(
  trx: Executor,
  effects: LedgerEffects,
  input: { holdId: string; amount: number; reason: string },
): Promise<CaptureOutcome> {
  // Claim the hold first: of two concurrent captures, the second blocks on this row and then
  // finds it no longer open.
  const [hold] = (
    await claimOpenHoldAsCaptured(trx, {
      holdId: input.holdId,
      amount: input.amount,
      now: effects.clock.now(),
    })
  ).rows;
  if (hold === undefined) return 'already_resolved';
  const windows = windowStartsOf(effects);
  const [charged] = (
    await chargeHeldOwing(trx, {
      accountId: hold.account_id,
      amount: input.amount,
      held: hold.amount,
      extra: Math.max(0, input.amount - hold.amount),
      ...windows,
    })
  ).rows;
  if (charged === undefined) {
    // Undo the claim inside this transaction; no other transaction ever saw it.
    await trx
      .updateTable('holds')
      .set({ state: 'open', captured_amount: null, resolved_at: null })
      .where('id', '=', input.holdId)
      .execute();
    return 'insufficient_funds';
  }
  if (hold.budget_key_id !== null)
    await resolveKeyBudget(trx, {
      keyId: hold.budget_key_id,
      held: hold.amount,
      spent: input.amount,
      ...windows,
    });
  await appendJournal(trx, effects, {
    accountId: hold.account_id,
    kind: 'capture',
    balanceDelta: -input.amount,
    heldDelta: -hold.amount,
    holdId: input.holdId,
    requestId: hold.request_id,
    reason: input.reason,
  });
  // The unused part of the hold is available again: what the account owes is paid from it.
  if (charged.owed > 0 && input.amount < hold.amount)
    await payOwed(trx, effects, {
      accountId: hold.account_id,
      from: `the unused part of hold ${input.holdId}`,
    });
  return 'captured';
}

/**
 * Releases an open hold in full (and pays what the account owes from it: `payOwed`). Returns
 * false when it was already resolved. In a transaction.
 */
export async function releaseHold(
  trx: Executor,
  effects: LedgerEffects,
  input: { holdId: string; reason: string },
): Promise<boolean> {
  const [resolved] = (
    await claimOpenHoldAsReleased(trx, { holdId: input.holdId, now: effects.clock.now() })
  ).rows;
  if (resolved === undefined) return false;
  const [account] = (
    await unholdAmount(trx, { accountId: resolved.account_id, amount: resolved.amount })
  ).rows;
  if (resolved.budget_key_id !== null)
    await resolveKeyBudget(trx, {
      keyId: resolved.budget_key_id,
      held: resolved.amount,
      spent: 0,
      ...windowStartsOf(effects),
    });
  await appendJournal(trx, effects, {
    accountId: resolved.account_id,
    kind: 'release',
    balanceDelta: 0,
    heldDelta: -resolved.amount,
    holdId: input.holdId,
    requestId: resolved.request_id,
    reason: input.reason,
  });
  if (account !== undefined && account.owed > 0 && resolved.amount > 0)
    await payOwed(trx, effects, {
      accountId: resolved.account_id,
      from: `the release of hold ${input.holdId}`,
    });
  return true;
}
