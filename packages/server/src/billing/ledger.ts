import { sql, type Kysely, type RawBuilder } from 'kysely';
import { preparedQuery } from '../store/prepared-query.js';
import type { Database, JournalKind, JournalTable } from '../store/schema.js';
import type { Clock, IdGenerator } from '../util/effects.js';
import { MAX_BALANCE_MICRO_YUAN } from './money.js';
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
const unholdAmount = preparedQuery<{ accountId: string; amount: number }>((db, slot) =>
  db
    .updateTable('accounts')
    .set({ held: sql`held - ${slot.amount}` })
    .where('id', '=', slot.accountId),
);

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
 * never adds past the bound). Call inside the transaction that records the top-up row, and roll
 * it back on `balance_limit`.
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
    .where('balance', '<=', MAX_BALANCE_MICRO_YUAN - input.amount)
    .executeTakeFirst();
  if (updated.numUpdatedRows !== 1n) {
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
  return { kind: 'credited' };
}

/**
 * Takes back up to `amount` of a refunded payment, never more than is available (balance −
 * held): a refund alone never drives a balance below zero nor eats into open holds. One guarded
 * update (`balance - held >= debited`); a concurrent movement that made it fail throws, so the
 * caller's transaction rolls back and the provider's redelivery tries again. Appends one
 * `refund` journal entry (negative balance delta; the ledger check counts these in its
 * conservation rule and matches them to the orders' refunds). Returns what was debited (0 when
 * nothing was available: no entry). In a transaction.
 */
export async function debitAvailable(
  trx: Executor,
  effects: LedgerEffects,
  input: { accountId: string; amount: number; reason: string },
): Promise<number> {
  const account = await trx
    .selectFrom('accounts')
    .select(['balance', 'held'])
    .where('id', '=', input.accountId)
    .executeTakeFirstOrThrow();
  const debited = Math.max(0, Math.min(input.amount, account.balance - account.held));
  if (debited === 0) return 0;
  const updated = await trx
    .updateTable('accounts')
    .set({ balance: sql`balance - ${debited}` })
    .where('id', '=', input.accountId)
    .where(sql<boolean>`balance - held >= ${debited}`)
    .executeTakeFirst();
  if (updated.numUpdatedRows !== 1n)
    throw new Error(`the available balance of ${input.accountId} changed during a refund`);
  await appendJournal(trx, effects, {
    accountId: input.accountId,
    kind: 'refund',
    balanceDelta: -debited,
    heldDelta: 0,
    reason: input.reason,
  });
  return debited;
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
 * Must run inside a transaction.
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
  const charged = await chargeHeld(trx, {
    accountId: hold.account_id,
    amount: input.amount,
    held: hold.amount,
    extra: Math.max(0, input.amount - hold.amount),
    ...windows,
  });
  if (charged.numAffectedRows !== 1n) {
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
  return 'captured';
}

/** Releases an open hold in full. Returns false when it was already resolved. In a transaction. */
export async function releaseHold(
  trx: Executor,
  effects: LedgerEffects,
  input: { holdId: string; reason: string },
): Promise<boolean> {
  const [resolved] = (
    await claimOpenHoldAsReleased(trx, { holdId: input.holdId, now: effects.clock.now() })
  ).rows;
  if (resolved === undefined) return false;
  await unholdAmount(trx, { accountId: resolved.account_id, amount: resolved.amount });
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
  return true;
}
