import { sql, type RawBuilder } from 'kysely';
import { preparedQuery } from '../store/prepared-query.js';
import { giveBackMoneySlot, takeMoneySlot } from '../events/request-events.js';
import { payOwed } from './account-money.js';
import { appendJournal, type Executor, type JournalEntry, type LedgerEffects } from './journal.js';
import {
  budgetWindowStartSql,
  spentInWindowSql,
  windowStartsOf,
  type BudgetRefusal,
  type WindowSlots,
  refusalOf,
} from '../budgets/budget-ledger.js';

/**
 * The ledger's holds, after TigerBeetle's two-phase transfers. An account has `balance` and
 * `held`; `available = balance - held` is never negative. Every function here takes a transaction
 * (or the database for single statements) and moves money only through guarded updates, and every
 * movement appends exactly one journal row (journal.ts) whose deltas replay to the account's
 * columns. Movements without a hold (credits, refunds, what an account owes) are account-money.ts.
 */
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
  const budgetKeyId = input.budgetKeyId ?? null;
  const reserved = await reserveForHold(trx, effects, {
    accountId: input.accountId,
    amount: input.amount,
    budgetKeyId,
  });
  if (reserved.kind !== 'reserved') return reserved;
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

/**
 * A hold's reserve on its account (and its key's budget): the guarded updates alone, without the
 * hold's row and journal entry (`placeHold` writes those; a logged claim leaves them to the
 * projector: requests/record-projection.ts). The caller rolls back on anything but `reserved`.
 */
export async function reserveForHold(
  trx: Executor,
  effects: LedgerEffects,
  input: { accountId: string; amount: number; budgetKeyId: string | null },
): Promise<{ readonly kind: 'reserved' } | Exclude<HoldOutcome, { kind: 'placed' }>> {
  const windows = windowStartsOf(effects);
  const updated = await reserveAvailable(trx, {
    accountId: input.accountId,
    amount: input.amount,
    ...windows,
  });
  if (updated.numAffectedRows !== 1n)
    return refusalOf(trx, effects, { scope: 'account', id: input.accountId, amount: input.amount });
  if (input.budgetKeyId !== null) {
    const reserved = await reserveKeyBudget(trx, {
      keyId: input.budgetKeyId,
      amount: input.amount,
      ...windows,
    });
    if (reserved.numAffectedRows !== 1n)
      return refusalOf(trx, effects, { scope: 'key', id: input.budgetKeyId, amount: input.amount });
  }
  return { kind: 'reserved' };
}

/**
 * A capture's movement on its account, without the hold's row: `amount` charged and the hold's
 * `held` released, the part above the hold only if available (else `insufficient_funds`, nothing
 * moved); the key's budget resolved; `journal`'s entry, if given; what the account owes paid from
 * the unused part. A logged finish (requests/logged-outcome.ts) gives no entry: the projector
 * writes it. In a transaction.
 */
export async function chargeForCapture(
  trx: Executor,
  effects: LedgerEffects,
  input: {
    accountId: string;
    amount: number;
    held: number;
    budgetKeyId: string | null;
    holdId: string;
    journal?: JournalEntry;
  },
): Promise<'captured' | 'insufficient_funds'> {
  const windows = windowStartsOf(effects);
  const [charged] = (
    await chargeHeldOwing(trx, {
      accountId: input.accountId,
      amount: input.amount,
      held: input.held,
      extra: Math.max(0, input.amount - input.held),
      ...windows,
    })
  ).rows;
  if (charged === undefined) return 'insufficient_funds';
  if (input.budgetKeyId !== null)
    await resolveKeyBudget(trx, {
      keyId: input.budgetKeyId,
      held: input.held,
      spent: input.amount,
      ...windows,
    });
  if (input.journal !== undefined) await appendJournal(trx, effects, input.journal);
  // The unused part of the hold is available again: what the account owes is paid from it.
  if (charged.owed > 0 && input.amount < input.held)
    await payOwed(trx, effects, {
      accountId: input.accountId,
      from: `the unused part of hold ${input.holdId}`,
    });
  return 'captured';
}

/** A release's movement on its account (as `chargeForCapture`, nothing charged). */
export async function unholdForRelease(
  trx: Executor,
  effects: LedgerEffects,
  input: {
    accountId: string;
    held: number;
    budgetKeyId: string | null;
    holdId: string;
    journal?: JournalEntry;
  },
): Promise<void> {
  const [account] = (await unholdAmount(trx, { accountId: input.accountId, amount: input.held }))
    .rows;
  if (input.budgetKeyId !== null)
    await resolveKeyBudget(trx, {
      keyId: input.budgetKeyId,
      held: input.held,
      spent: 0,
      ...windowStartsOf(effects),
    });
  if (input.journal !== undefined) await appendJournal(trx, effects, input.journal);
  if (account !== undefined && account.owed > 0 && input.held > 0)
    await payOwed(trx, effects, {
      accountId: input.accountId,
      from: `the release of hold ${input.holdId}`,
    });
}

/** Off the event log: no slot to take, and the resolution is this writer's to make. */
const NO_SLOT = { taken: true, requestId: null } as const;

/**
 * With `moneyEvents`, takes the hold's request's money slot in the log before a resolution here
 * moves anything (LedgerEffects says why); `false`: not this writer's to resolve. The slot is
 * given back by `resolvedHere` when the resolution moved nothing after all.
 */
async function takeSlotOf(
  trx: Executor,
  holdId: string,
  effects: LedgerEffects,
): Promise<{ taken: boolean; requestId: string | null }> {
  const hold = await trx
    .selectFrom('holds')
    .select(['request_id', 'account_id'])
    .where('id', '=', holdId)
    .executeTakeFirst();
  if (hold === undefined) return { taken: false, requestId: null };
  const taken = await takeMoneySlot(trx, {
    requestId: hold.request_id,
    accountId: hold.account_id,
    now: effects.clock.now(),
  });
  return { taken, requestId: hold.request_id };
}

async function resolvedHere<T>(
  trx: Executor,
  slot: { requestId: string | null },
  moved: boolean,
  result: T,
): Promise<T> {
  if (!moved && slot.requestId !== null) await giveBackMoneySlot(trx, slot.requestId);
  return result;
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
  // Off the event log, no slot to take and no await on the request path.
  const slot =
    effects.moneyEvents === true ? await takeSlotOf(trx, input.holdId, effects) : NO_SLOT;
  if (!slot.taken) return 'already_resolved';
  // Claim the hold first: of two concurrent captures, the second blocks on this row and then
  // finds it no longer open.
  const [hold] = (
    await claimOpenHoldAsCaptured(trx, {
      holdId: input.holdId,
      amount: input.amount,
      now: effects.clock.now(),
    })
  ).rows;
  if (hold === undefined) return resolvedHere(trx, slot, false, 'already_resolved');
  const charged = await chargeForCapture(trx, effects, {
    accountId: hold.account_id,
    amount: input.amount,
    held: hold.amount,
    budgetKeyId: hold.budget_key_id,
    holdId: input.holdId,
    journal: {
      accountId: hold.account_id,
      kind: 'capture',
      balanceDelta: -input.amount,
      heldDelta: -hold.amount,
      holdId: input.holdId,
      requestId: hold.request_id,
      reason: input.reason,
    },
  });
  if (charged === 'insufficient_funds') {
    // Undo the claim inside this transaction; no other transaction ever saw it.
    await trx
      .updateTable('holds')
      .set({ state: 'open', captured_amount: null, resolved_at: null })
      .where('id', '=', input.holdId)
      .execute();
    return resolvedHere(trx, slot, false, 'insufficient_funds');
  }
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
  // Off the event log, no slot to take and no await on the request path.
  const slot =
    effects.moneyEvents === true ? await takeSlotOf(trx, input.holdId, effects) : NO_SLOT;
  if (!slot.taken) return false;
  const [resolved] = (
    await claimOpenHoldAsReleased(trx, { holdId: input.holdId, now: effects.clock.now() })
  ).rows;
  if (resolved === undefined) return resolvedHere(trx, slot, false, false);
  await unholdForRelease(trx, effects, {
    accountId: resolved.account_id,
    held: resolved.amount,
    budgetKeyId: resolved.budget_key_id,
    holdId: input.holdId,
    journal: {
      accountId: resolved.account_id,
      kind: 'release',
      balanceDelta: 0,
      heldDelta: -resolved.amount,
      holdId: input.holdId,
      requestId: resolved.request_id,
      reason: input.reason,
    },
  });
  return true;
}
