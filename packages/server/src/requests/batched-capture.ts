import { sql, type Kysely, type RawBuilder } from 'kysely';
import { chargeHeld, chargeHeldUpdate } from '../billing/ledger.js';
import { insertJournal, journalRow, type LedgerEffects } from '../billing/journal.js';
import { payOwed } from '../billing/account-money.js';
import { windowStartsOf, type WindowSlots } from '../budgets/budget-ledger.js';
import type { Database } from '../store/schema.js';
import { shapedStatement } from '../store/shaped-statement.js';
import { KeyedBatcher, type BatchItem } from '../util/keyed-batcher.js';
import {
  ALL_ACCOUNTS,
  chargeAccounts,
  chargeAccountsUpdate,
  idRows,
  lockAccounts,
  lockAccountsInOrder,
  resolveOnKeysUpdate,
  sortedDistinct,
} from './batched-accounts.js';
import { refuseUnless, runAsOneStatement } from './one-statement.js';
import { assertMove } from './record-states.js';
import {
  outcomeColumns,
  outcomeValues,
  setOutcomeColumns,
  typedOutcomeRow,
  type RecordedOutcomeColumns,
} from './outcome-columns.js';
import { withFields } from '../util/with-fields.js';

/** The most captures in one batch (bounds the multi-row statements' parameters). */
const MAX_BATCH = 200;

/** A priced result's capture and record, as `writeOutcome` would write them alone. */
export interface CaptureRequest {
  readonly accountId: string;
  readonly holdId: string;
  readonly amount: number;
  readonly reason: string;
  /** Whether its hold also reserved against its key's budget (the statement then resolves it). */
  readonly budgeted: boolean;
  /** The record's outcome columns, status `succeeded`; written only if it is `processing`. */
  readonly record: RecordedOutcomeColumns;
}

/** `alone`: not done here (nothing of it persists); the caller writes it alone, as before. */
export type BatchedCaptureResult = 'captured' | 'alone';

interface CaptureItem extends CaptureRequest, BatchItem<BatchedCaptureResult> {}

/** Some items cannot be batched as they are; the batch rolls back and runs again without them. */
class WithoutThese extends Error {
  constructor(readonly items: ReadonlySet<CaptureItem>) {
    super('captures to write alone');
  }
}

/**
 * Batched captures for PostgreSQL, the other half of batched admission (batched-admission.ts,
 * docs/billing.md): the captures finishing on this instance within one event-loop turn, of any
 * accounts, share one transaction: one update claiming their open holds, ONE lock of their
 * accounts' rows (in id order) and ONE update charging each row its sum (batched-accounts.ts),
 * one update of their budgeted keys, one multi-row journal insert, one update of their records
 * (each guarded on `processing`), one COMMIT. An account that owes a refund (billing/ledger.ts
 * `payOwed`) is never charged by the one statement: its batch takes the transaction way, which
 * pays what is owed from the holds' unused parts.
 *
 * Only what is certain to be charged is batched: a capture within its hold (charging never
 * needs more than is held), of a hold still open, of a record still `processing`. Any other
 * (a capture above its hold, whose extra must be available at its turn; a hold or record an
 * operator or the sweeper moved) is taken out, the batch rolls back and runs again without it,
 * and it is written alone by the caller with the single path's rules (awaiting funds, the late
 * outcome of a swept record). Lock order is the single capture's: holds, accounts, keys, records.
 */
export class BatchedCapture {
  readonly #batcher: KeyedBatcher<CaptureItem>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly effects: LedgerEffects,
    /** Told when a batch rolled back and its captures ran one at a time (a deadlock, an error). */
    private readonly onAlone: (error: unknown) => void = () => {},
  ) {
    this.#batcher = new KeyedBatcher((_lane, batch) => this.#capture(batch), {
      maxBatch: MAX_BATCH,
      // One hold is captured once: a second capture of it (a repeated finish) waits for the
      // next batch, finds it resolved and is written alone (`already_resolved`).
      compatible: (item, taken) => !taken.some((other) => other.holdId === item.holdId),
    });
    assertMove('processing', 'succeeded');
  }

  capture(request: CaptureRequest): Promise<BatchedCaptureResult> {
    return new Promise((resolve, reject) =>
      this.#batcher.add(ALL_ACCOUNTS, withFields(request, { resolve, reject })),
    );
  }

  async #capture(batch: readonly CaptureItem[]): Promise<void> {
    // A batch within open holds, of records still `processing`, is written whole in one
    // statement or not at all (then as before).
    if (await this.#captureInOneStatement(batch)) {
      for (const item of batch) item.resolve('captured');
      return;
    }
    let remaining = batch;
    while (remaining.length > 0) {
      // Alone, a capture's own transaction is the same work with prepared statements.
      if (remaining.length === 1) {
        for (const item of remaining) item.resolve('alone');
        return;
      }
      let decided = false;
      try {
        await this.db.transaction().execute(async (trx) => {
          await this.#captureIn(trx, remaining);
          decided = true;
        });
      } catch (error) {
        // A failed COMMIT may have committed: its callers hear the error, as alone.
        if (decided) throw error;
        if (!(error instanceof WithoutThese)) {
          // Rolled back: each runs alone and meets its own fate.
          this.onAlone(error);
          for (const item of remaining) item.resolve('alone');
          return;
        }
        for (const item of error.items) item.resolve('alone');
        remaining = remaining.filter((item) => !error.items.has(item));
        continue;
      }
      for (const item of remaining) item.resolve('captured');
      return;
    }
  }

  /**
   * Writes every capture of the batch in ONE statement (one-statement.ts): the claim of their
   * holds (still open, of their accounts, each capture within its hold), each account charged
   * its sum (one account: the single capture's update, `captureAll`; several: their rows locked
   * in id order first, `captureAcrossAccounts`), each budgeted key given back its holds and
   * charged their captures, their journal entries, and their records moved from `processing`,
   * in the single capture's lock order (holds, accounts, keys, records: each part reads the one
   * before).
   * If any of them is not so, the statement refuses and rolls back whole. Returns whether it
   * wrote them.
   */
  async #captureInOneStatement(batch: readonly CaptureItem[]): Promise<boolean> {
    const accountIds = sortedDistinct(batch, (item) => item.accountId);
    const now = this.effects.clock.now();
    const windows = windowStartsOf(this.effects);
    const captures = batch.map((item) => ({
      accountId: item.accountId,
      holdId: item.holdId,
      amount: item.amount,
      entryId: this.effects.ids.next('jrn'),
      reason: item.reason,
      outcome: outcomeValues(item.record),
    }));
    // Left out when no hold has a key budget: the statement then has no keys' part at all.
    const withKeyBudgets = batch.some((item) => item.budgeted) ? (true as const) : undefined;
    return runAsOneStatement(
      this.db,
      accountIds.length === 1
        ? captureAll(this.db, { accountId: accountIds[0]!, now, windows, captures, withKeyBudgets })
        : captureAcrossAccounts(this.db, { accountIds, now, windows, captures, withKeyBudgets }),
      batch.length,
      this.onAlone,
    );
  }

  async #captureIn(trx: Kysely<Database>, batch: readonly CaptureItem[]): Promise<void> {
    const now = this.effects.clock.now();
    const holds = await sql<{
      id: string;
      account_id: string;
      amount: number;
      request_id: string;
      budget_key_id: string | null;
    }>`update holds set state = 'captured', captured_amount = claimed.amount, resolved_at = ${now}
      from (values ${claimedValues(batch)}) as claimed (id, amount)
      where holds.id = claimed.id and holds.state = 'open'
      returning holds.id, holds.account_id, holds.amount, holds.request_id, holds.budget_key_id`.execute(
      trx,
    );
    // A hold twice in one batch never happens (`compatible`); if it did, the sums below would
    // count it twice, so the whole batch goes alone instead.
    if (new Set(batch.map((item) => item.holdId)).size !== batch.length)
      throw new Error('a hold twice in one capture batch');
    const byId = new Map(holds.rows.map((hold) => [hold.id, hold]));
    const alone = new Set(
      batch.filter((item) => {
        const hold = byId.get(item.holdId);
        return (
          hold === undefined || hold.account_id !== item.accountId || item.amount > hold.amount
        );
      }),
    );
    if (alone.size > 0) throw new WithoutThese(alone);

    const windows = windowStartsOf(this.effects);
    const sums = new Map<string, { charge: number; unheld: number }>();
    for (const item of batch) {
      const sum = sums.get(item.accountId) ?? { charge: 0, unheld: 0 };
      sums.set(item.accountId, {
        charge: sum.charge + item.amount,
        unheld: sum.unheld + byId.get(item.holdId)!.amount,
      });
    }
    if (sums.size === 1) {
      // One row: its update locks it, no order needed.
      const [accountId, sum] = [...sums][0]!;
      const charged = await chargeHeld(trx, {
        accountId,
        amount: sum.charge,
        held: sum.unheld,
        extra: 0,
        ...windows,
      });
      if (charged.numAffectedRows !== 1n) throw new Error('the batched capture was refused');
    } else {
      // Several rows: locked in id order first (batched-accounts.ts), then charged at once.
      await lockAccounts(
        trx,
        sortedDistinct(batch, (item) => item.accountId),
        windows,
      );
      const charged = await chargeAccounts(trx, sums, windows);
      if (charged.size !== sums.size) throw new Error('the batched capture was refused');
    }
    const perKey = new Map<string, { held: number; spent: number }>();
    for (const item of batch) {
      const hold = byId.get(item.holdId)!;
      if (hold.budget_key_id === null) continue;
      const sums = perKey.get(hold.budget_key_id) ?? { held: 0, spent: 0 };
      perKey.set(hold.budget_key_id, {
        held: sums.held + hold.amount,
        spent: sums.spent + item.amount,
      });
    }
    // Every key in one update: a key lock is only ever waited for by a batch that already holds
    // its account (docs/billing.md, "No deadlock"), so the keys need no order of their own.
    if (perKey.size > 0) {
      const keys = idRows(
        'k',
        ['held', 'spent'],
        [...perKey].map(([id, sums]) => ({ id, ...sums })),
      );
      await resolveOnKeysUpdate(keys, windows, sql<boolean>`true`).execute(trx);
    }
    const journal = batch.map((item) => {
      const hold = byId.get(item.holdId)!;
      return journalRow(this.effects, {
        accountId: item.accountId,
        kind: 'capture',
        balanceDelta: -item.amount,
        heldDelta: -hold.amount,
        holdId: item.holdId,
        requestId: hold.request_id,
        reason: item.reason,
      });
    });
    if (journal.length === 1) await insertJournal(trx, journal[0]!);
    else await trx.insertInto('journal').values(journal).execute();
    await payOwedFromCaptures(trx, this.effects, [...sums.keys()]);

    const moved = await recordOutcomes(trx, batch);
    const unmoved = new Set(batch.filter((item) => !moved.has(item.record.id)));
    if (unmoved.size > 0) throw new WithoutThese(unmoved);
  }
}

/**
 * The unused part of the batch's holds is available again: an account of the batch that owes
 * (a refund not yet taken back: billing/ledger.ts `payOwed`) pays from it, in the batch's
 * transaction. The one statement never charges such an account (its update requires `owed = 0`),
 * so this is the only batched path that meets one.
 */
async function payOwedFromCaptures(
  trx: Kysely<Database>,
  effects: LedgerEffects,
  accountIds: readonly string[],
): Promise<void> {
  const owing = await trx
    .selectFrom('accounts')
    .select('id')
    .where('id', 'in', accountIds)
    .where('owed', '>', 0)
    .orderBy('id')
    .execute();
  for (const account of owing)
    await payOwed(trx, effects, {
      accountId: account.id,
      from: 'the unused part of captured holds',
    });
}

/** Moves each batch record `processing` → its outcome in one statement; returns those moved. */
async function recordOutcomes(
  trx: Kysely<Database>,
  batch: readonly CaptureItem[],
): Promise<Set<string>> {
  const moved = recordOutcomesUpdate(batch.map((item) => outcomeValues(item.record)));
  const result = await moved.execute(trx);
  return new Set(result.rows.map((row) => row.id));
}

/**
 * The one statement of `#captureInOneStatement`, compiled once per batch shape (its builder places
 * values and never reads them: store/shaped-statement.ts): the claim of the batch's holds (still
 * open, of the account, each capture within its hold), the account charged their sum (the single
 * capture's update, `chargeHeldUpdate`), then `capturedInOneStatement`'s keys, journal entries
 * and records; refused whole unless every record moved.
 */
export const captureAll = shapedStatement(
  (
    db,
    batch: {
      accountId: string;
      now: number;
      windows: WindowSlots;
      captures: readonly Capture[];
      withKeyBudgets?: true | undefined;
    },
  ) => {
    const { accountId, captures } = batch;
    const charged = chargeHeldUpdate(db, {
      accountId,
      amount: sql<number>`cast((select sum(charge) from captured) as bigint)`,
      held: sql<number>`cast((select sum(held) from captured) as bigint)`,
      extra: 0,
      ...batch.windows,
    })
      .where(sql<number>`(select count(*) from captured)`, '=', captures.length)
      // An account that owes pays from what its captures free: the transaction way does that.
      .where('owed', '=', 0)
      .returning('id');
    return capturedInOneStatement(
      batch,
      sql`charged as (${charged})`,
      sql`exists (select 1 from charged)`,
    );
  },
);

/**
 * `captureAll` for a batch of several accounts: the holds claimed (each of its own account), then
 * the accounts' rows locked in id order (the transaction way's order, batched-accounts.ts), each
 * charged its own sums by the update of `chargeAccounts`, the journal entries and the records;
 * refused whole unless every record moved.
 */
export const captureAcrossAccounts = shapedStatement(
  (
    db,
    batch: {
      /** The batch's accounts, distinct, in id order. */
      accountIds: readonly string[];
      now: number;
      windows: WindowSlots;
      captures: readonly Capture[];
      withKeyBudgets?: true | undefined;
    },
  ) => {
    const { captures } = batch;
    const locked = lockAccountsInOrder(
      batch.accountIds,
      sql`(select count(*) from captured) = ${captures.length}`,
    );
    const charged = chargeAccountsUpdate(
      sql`(select account_id as id, cast(sum(charge) as bigint) as charge,
          cast(sum(held) as bigint) as unheld from captured group by account_id) as v`,
      batch.windows,
      // An account that owes pays from what its captures free: the transaction way does that.
      sql`accounts.id in (select id from locked) and accounts.owed = 0`,
    );
    return capturedInOneStatement(
      batch,
      sql`locked as (${locked}), charged as (${charged})`,
      sql`(select count(*) from charged) = ${batch.accountIds.length}`,
    );
  },
);

/**
 * A capture batch's one statement around its accounts' part (`charged`, and what it reads;
 * `accountsDone` reads it whole): the batch's holds claimed (each still open, of its capture's
 * account, within it, and without a key budget unless the batch has `withKeyBudgets`), then the
 * accounts' part, the keys' budgets given back and charged (with `withKeyBudgets`), the journal
 * entries and the records moved; refused whole unless every record moved. Each part reads the one
 * before (the lock order of a single capture: holds, accounts, keys, records).
 */
function capturedInOneStatement(
  batch: {
    now: number;
    windows: WindowSlots;
    captures: readonly Capture[];
    withKeyBudgets?: true | undefined;
  },
  accounts: RawBuilder<unknown>,
  accountsDone: RawBuilder<boolean>,
): RawBuilder<unknown> {
  const { now, captures } = batch;
  const claimed = sql.join(
    captures.map(
      (capture) =>
        sql`(cast(${capture.holdId} as text), cast(${capture.accountId} as text), cast(${capture.amount} as bigint))`,
    ),
  );
  const entries = sql.join(
    captures.map(
      (capture) =>
        sql`(cast(${capture.entryId} as text), cast(${capture.holdId} as text), cast(${capture.reason} as text))`,
    ),
  );
  let keys = sql``;
  let done = accountsDone;
  if (batch.withKeyBudgets !== undefined) {
    const resolved = resolveOnKeysUpdate(
      sql`(select budget_key_id as id, cast(sum(held) as bigint) as held,
          cast(sum(charge) as bigint) as spent
        from captured where budget_key_id is not null group by budget_key_id) as k`,
      batch.windows,
      accountsDone,
    );
    keys = sql`keys_resolved as (${resolved}),`;
    done = sql<boolean>`(select count(*) from keys_resolved)
      = (select count(distinct budget_key_id) from captured)`;
  }
  const moved = recordOutcomesUpdate(
    captures.map((capture) => capture.outcome),
    done,
  );
  return sql`with captured as (
      update holds set state = 'captured', captured_amount = claimed.amount, resolved_at = ${now}
      from (values ${claimed}) as claimed (id, account_id, amount)
      where holds.id = claimed.id and holds.state = 'open' and holds.account_id = claimed.account_id
        and ${batch.withKeyBudgets === undefined ? sql`holds.budget_key_id is null` : sql`true`}
        and claimed.amount <= holds.amount
      returning holds.id, holds.account_id, holds.amount as held, claimed.amount as charge,
        holds.request_id, holds.budget_key_id),
    ${accounts},
    ${keys}
    new_entries as (
      insert into journal (id, account_id, kind, balance_delta, held_delta, hold_id, request_id,
        topup_id, reason, created_at)
      select entry.id, captured.account_id, 'capture', -captured.charge, -captured.held,
        captured.id, captured.request_id, null, entry.reason, cast(${now} as bigint)
      from (values ${entries}) as entry (id, hold_id, reason)
      join captured on captured.id = entry.hold_id),
    moved as (${moved})
    ${refuseUnless(
      sql`(select count(*) from moved) = ${captures.length}`,
      'a capture of the batch cannot be written as it is',
    )}`;
}

/** One capture of a one-statement batch, as its statement places it. */
interface Capture {
  accountId: string;
  holdId: string;
  amount: number;
  entryId: string;
  reason: string;
  outcome: readonly unknown[];
}

/**
 * The update moving each batch record `processing` → its outcome (`outcomeValues`; and only where
 * `condition` holds), returning the ids moved. Its columns are the single write's
 * (outcome-columns.ts), each value cast to its column's type: PostgreSQL cannot infer the types
 * of a `values` list's parameters.
 */
function recordOutcomesUpdate(
  outcomes: readonly (readonly unknown[])[],
  condition: RawBuilder<boolean> = sql`true`,
): RawBuilder<{ id: string }> {
  const rows = outcomes.map((values) => typedOutcomeRow(values));
  const names = sql.join(outcomeColumns.map((column) => sql.id(column)));
  const set = sql.join(
    setOutcomeColumns.map((column) => sql`${sql.id(column)} = ${sql.ref(`o.${column}`)}`),
  );
  return sql`update requests set ${set}
    from (values ${sql.join(rows)}) as o (${names})
    where requests.id = o.id and requests.status = 'processing' and ${condition}
    returning requests.id`;
}

/** The `values` rows (hold id, amount captured) that claim the batch's holds, typed. */
function claimedValues(batch: readonly CaptureItem[]): RawBuilder<unknown> {
  return sql.join(
    batch.map((item) => sql`(cast(${item.holdId} as text), cast(${item.amount} as bigint))`),
  );
}
