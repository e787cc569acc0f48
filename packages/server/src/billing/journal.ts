import type { Kysely } from 'kysely';
import { preparedQuery } from '../store/prepared-query.js';
import type { Database, JournalKind, JournalTable } from '../store/schema.js';
import type { Clock, IdGenerator } from '../util/effects.js';

/**
 * The journal: every money movement appends exactly one row whose deltas replay to its account's
 * columns (ledger-check.ts). The ledger's movements (ledger.ts, account-money.ts) write it here.
 */
export type Executor = Kysely<Database>;

export interface LedgerEffects {
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** Where budget windows turn over (IANA zone); Asia/Shanghai when not given. */
  readonly budgetTimeZone?: string;
  /**
   * `accounting.event_log`: finishes are written to the event log (requests/logged-outcome.ts),
   * so every resolution made here first takes its request's one money slot in the log
   * (events/request-events.ts `takeMoneySlot`), which a logged finish racing it would find taken.
   */
  readonly moneyEvents?: boolean;
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
