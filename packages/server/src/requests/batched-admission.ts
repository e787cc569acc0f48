import { sql, type Kysely, type RawBuilder } from 'kysely';
import { reserveAvailable, reserveAvailableUpdate, reserveKeyBudget } from '../billing/ledger.js';
import { insertJournal, journalRow, type LedgerEffects } from '../billing/journal.js';
import {
  accountRefusalOf,
  refusalOf,
  windowStartsOf,
  type WindowSlots,
} from '../budgets/budget-ledger.js';
import type { ApiError } from '../errors/api-error.js';
import type { Database, HoldTable, JournalTable } from '../store/schema.js';
import { shapedStatement } from '../store/shaped-statement.js';
import { KeyedBatcher, type BatchItem } from '../util/keyed-batcher.js';
import {
  ALL_ACCOUNTS,
  lockAccounts,
  lockAccountsInOrder,
  reserveOnAccounts,
  idRows,
  reserveOnAccountsUpdate,
  reserveOnKeysUpdate,
  sortedDistinct,
} from './batched-accounts.js';
import type { RecordRow } from './record-view.js';
import { insufficientFunds, overBudget } from './request-errors.js';
import { refuseUnless, runAsOneStatement } from './one-statement.js';
import type { NewRecord, RequestStore } from './request-store.js';

/** The most claims one batch admits (bounds the multi-row statements' parameters). */
const MAX_BATCH = 200;

/** One plain claim (a hold, no assets, no work inside) waiting for its account's batch. */
export interface AdmissionItem extends BatchItem<Admission> {
  readonly record: NewRecord & { hold_id: string; reserve_amount: number; price_version: string };
  /** The key whose budget the hold also reserves against, or null. */
  readonly budgetKeyId: string | null;
}

/** How one claim of a batch ended; `existing` is answered by the caller as a replay would be. */
export type Admission =
  | { readonly kind: 'admitted' }
  | { readonly kind: 'existing'; readonly row: RecordRow }
  | { readonly kind: 'refused'; readonly error: ApiError }
  /** The batch could not run; the caller claims this one alone, as without batching. */
  | { readonly kind: 'alone' };

/**
 * Batched admission for PostgreSQL (docs/billing.md, "Batched admission"). On PostgreSQL an
 * account's requests queue on its balance row: each claim locks it until its COMMIT has flushed,
 * and every claim pays its own statements and COMMIT. Here the plain claims that arrive on this
 * instance within one event-loop turn, of any accounts, share one transaction: one multi-row
 * insert of their records, ONE lock of their accounts' rows and ONE guarded update of each row
 * for the sum of what it admits (batched-accounts.ts), one multi-row insert of the holds and
 * one of their journal entries, one COMMIT.
 *
 * Admission is the same as one at a time in arrival order: with the account rows locked (`for
 * no key update`, so every other instance's claims and captures of them wait), each claim is admitted
 * if it fits what the earlier ones of its account left (balance, account budget; a key budget by
 * its own guarded update, in order), else it gets the 402 it would have got alone and its
 * record is deleted again. Each summed update carries the same guards as a single hold, so the
 * database still decides: if one refused, the batch rolls back and every claim runs alone.
 *
 * Lock order is the single claim's: records (in one sorted order, so two batches never wait on
 * each other's idempotency keys in a circle), then the accounts (in id order), then their keys;
 * deadlock-free against single claims, captures (hold, account, key, record) and other
 * instances' batches.
 */
export class BatchedAdmission {
  readonly #batcher: KeyedBatcher<AdmissionItem>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly effects: LedgerEffects,
    private readonly records: RequestStore,
    /** Told when a batch rolled back and its claims ran one at a time (a deadlock, an error). */
    private readonly onAlone: (error: unknown) => void = () => {},
  ) {
    this.#batcher = new KeyedBatcher((_lane, batch) => this.#admit(batch), {
      maxBatch: MAX_BATCH,
      // Two uses of one idempotency key in one batch would answer each other; the second waits.
      compatible: (item, taken) =>
        !taken.some(
          (other) =>
            other.record.key_id === item.record.key_id &&
            other.record.idempotency_key === item.record.idempotency_key,
        ),
    });
  }

  admit(record: AdmissionItem['record'], budgetKeyId: string | null): Promise<Admission> {
    return new Promise((resolve, reject) =>
      this.#batcher.add(ALL_ACCOUNTS, { record, budgetKeyId, resolve, reject }),
    );
  }

  async #admit(batch: readonly AdmissionItem[]): Promise<void> {
    // A batch is admitted whole in one statement or not at all (then decided claim by claim
    // below, exactly as before).
    if (await this.#admitInOneStatement(batch)) {
      for (const item of batch) item.resolve({ kind: 'admitted' });
      return;
    }
    // Alone, a claim's own transaction is the same work with fewer statements (all prepared).
    if (batch.length === 1) {
      for (const item of batch) item.resolve({ kind: 'alone' });
      return;
    }
    let decided = false;
    let outcomes: Map<AdmissionItem, Admission>;
    try {
      outcomes = await this.db.transaction().execute(async (trx) => {
        const result = await this.#admitIn(trx, batch);
        decided = true;
        return result;
      });
    } catch (error) {
      // Before the COMMIT nothing of the batch persists: each claim runs alone and meets its own
      // fate (an error of one no longer fails the others). A failed COMMIT may have committed:
      // its callers hear the error, as a single claim's would.
      if (decided) throw error;
      this.onAlone(error);
      for (const item of batch) item.resolve({ kind: 'alone' });
      return;
    }
    for (const item of batch) item.resolve(outcomes.get(item) ?? { kind: 'alone' });
  }

  async #admitIn(
    trx: Kysely<Database>,
    batch: readonly AdmissionItem[],
  ): Promise<Map<AdmissionItem, Admission>> {
    const outcomes = new Map<AdmissionItem, Admission>();
    const sorted = [...batch].sort((a, b) => compareKeys(a.record, b.record));
    const inserted = new Set(
      (
        await trx
          .insertInto('requests')
          .values(sorted.map((item) => item.record))
          .onConflict((conflict) => conflict.columns(['key_id', 'idempotency_key']).doNothing())
          .returning('id')
          .execute()
      ).map((row) => row.id),
    );
    const fresh: AdmissionItem[] = [];
    for (const item of batch) {
      if (inserted.has(item.record.id)) {
        fresh.push(item);
        continue;
      }
      const row = await this.records.byIdempotencyKey(
        item.record.key_id,
        item.record.idempotency_key,
        trx,
      );
      if (row === undefined) throw new Error('idempotency conflict without a record');
      outcomes.set(item, { kind: 'existing', row });
    }
    if (fresh.length === 0) return outcomes;

    const windows = windowStartsOf(this.effects);
    const accountIds = sortedDistinct(fresh, (item) => item.record.account_id);
    if (accountIds.length === 1 && fresh.every((item) => item.budgetKeyId === null)) {
      // When all of them fit, one at a time would admit all of them (every guard only gets
      // tighter with each hold): the guarded update for the sum decides that at once (and
      // locks the one row, so no order is needed).
      const total = fresh.reduce((sum, item) => sum + item.record.reserve_amount, 0);
      const all = await reserveAvailable(trx, {
        accountId: accountIds[0]!,
        amount: total,
        ...windows,
      });
      if (all.numAffectedRows === 1n) {
        for (const item of fresh) outcomes.set(item, { kind: 'admitted' });
        await this.#writeHolds(trx, fresh);
        return outcomes;
      }
    }
    // Locks the rows (in id order: batched-accounts.ts): from here every claim and capture of
    // these accounts, anywhere, waits for us.
    const accounts = await lockAccounts(trx, accountIds, windows);
    const reserved = new Map<string, number>();
    const admitted: AdmissionItem[] = [];
    const refused: string[] = [];
    for (const item of fresh) {
      const amount = item.record.reserve_amount;
      const account = accounts.get(item.record.account_id);
      const before = reserved.get(item.record.account_id) ?? 0;
      // The guards of a single hold (billing/ledger.ts `reserveAvailable`), on what is left.
      const fits =
        account !== undefined &&
        account.balance - account.held - before >= amount &&
        (account.budget_limit === null ||
          account.spent_in_window + account.held + before + amount <= account.budget_limit);
      let refusal: Admission | undefined;
      if (!fits) {
        const why =
          account === undefined
            ? ({ kind: 'insufficient_funds' } as const)
            : accountRefusalOf({ ...account, held: account.held + before }, amount, this.effects);
        refusal = refusedBy(why, amount);
      } else if (item.budgetKeyId !== null) {
        // A key belongs to one account, whose row we hold: no other batch waits here for us.
        const onKey = await reserveKeyBudget(trx, {
          keyId: item.budgetKeyId,
          amount,
          ...windows,
        });
        if (onKey.numAffectedRows !== 1n)
          refusal = refusedBy(
            await refusalOf(trx, this.effects, { scope: 'key', id: item.budgetKeyId, amount }),
            amount,
          );
      }
      if (refusal === undefined) {
        reserved.set(item.record.account_id, before + amount);
        admitted.push(item);
        outcomes.set(item, { kind: 'admitted' });
      } else {
        refused.push(item.record.id);
        outcomes.set(item, refusal);
      }
    }
    // Refused: as if never claimed (a single claim's rollback), so the key may be sent again.
    if (refused.length > 0) await trx.deleteFrom('requests').where('id', 'in', refused).execute();
    if (admitted.length === 0) return outcomes;

    const updated = await reserveOnAccounts(trx, reserved, windows);
    if (updated.size !== reserved.size)
      throw new Error('the batched hold was refused by the database; claiming one at a time');
    await this.#writeHolds(trx, admitted);
    return outcomes;
  }

  /**
   * Admits every claim of the batch in ONE statement (one-statement.ts): their records (in one
   * sorted order, as below; a key already used fails the statement), the guarded reserve of
   * each account's sum (one account: the single hold's update, `admitAll`; several: locked in
   * id order first, `admitAcrossAccounts`), after the records, then of each budgeted key's sum
   * (the lock order of a single claim), their holds and journal entries. When they
   * all fit, one at a time would admit all of them too; when not, the statement refuses and
   * rolls back whole, and the caller decides claim by claim. Returns whether it admitted them.
   */
  async #admitInOneStatement(batch: readonly AdmissionItem[]): Promise<boolean> {
    const sorted = [...batch].sort((a, b) => compareKeys(a.record, b.record));
    const sums = new Map<string, number>();
    const keySums = new Map<string, number>();
    for (const { record, budgetKeyId } of sorted) {
      sums.set(record.account_id, (sums.get(record.account_id) ?? 0) + record.reserve_amount);
      if (budgetKeyId !== null)
        keySums.set(budgetKeyId, (keySums.get(budgetKeyId) ?? 0) + record.reserve_amount);
    }
    const { holds, journal } = this.#holdRows(sorted);
    const windows = windowStartsOf(this.effects);
    const records = sorted.map((item) => item.record);
    // Left out when no claim has a key budget: the statement then has no keys' part at all.
    const keys = keySums.size === 0 ? undefined : inIdOrder(keySums);
    const [only] = sums;
    return runAsOneStatement(
      this.db,
      sums.size === 1
        ? admitAll(this.db, {
            accountId: only![0],
            total: only![1],
            windows,
            records,
            holds,
            journal,
            keySums: keys,
          })
        : admitAcrossAccounts(this.db, {
            windows,
            records,
            holds,
            journal,
            sums: inIdOrder(sums),
            keySums: keys,
          }),
      sorted.length,
      this.onAlone,
    );
  }

  /** The holds of admitted claims and their journal entries. */
  #holdRows(admitted: readonly AdmissionItem[]): { holds: HoldTable[]; journal: JournalTable[] } {
    const now = this.effects.clock.now();
    return {
      holds: admitted.map((item) => holdRow(item, now)),
      journal: admitted.map((item) =>
        journalRow(this.effects, {
          accountId: item.record.account_id,
          kind: 'hold',
          balanceDelta: 0,
          heldDelta: item.record.reserve_amount,
          holdId: item.record.hold_id,
          requestId: item.record.id,
          reason: `reserve for ${item.record.id}`,
        }),
      ),
    };
  }

  /** The holds of the admitted claims and their journal entries, one statement each. */
  async #writeHolds(trx: Kysely<Database>, admitted: readonly AdmissionItem[]): Promise<void> {
    const { holds, journal } = this.#holdRows(admitted);
    await trx.insertInto('holds').values(holds).execute();
    if (journal.length === 1) await insertJournal(trx, journal[0]!);
    else await trx.insertInto('journal').values(journal).execute();
  }
}

/**
 * The one statement of `#admitInOneStatement`, compiled once per batch shape (its builder places
 * values and never reads them: store/shaped-statement.ts): the records (a key already used fails
 * it), the guarded reserve of their sum on the account after them (the single hold's update, the
 * lock order of a single claim), their holds and journal entries; refused whole unless the
 * reserve fits.
 */
export const admitAll = shapedStatement(
  (
    db,
    batch: {
      accountId: string;
      total: number;
      windows: WindowSlots;
      records: readonly AdmissionItem['record'][];
      holds: readonly HoldTable[];
      journal: readonly JournalTable[];
      /** Each budgeted key's sum, in id order; left out when no claim has a key budget. */
      keySums?: readonly { id: string; amount: number }[] | undefined;
    },
  ) => {
    const records = db.insertInto('requests').values(batch.records).returning('id');
    const reserved = reserveAvailableUpdate(db, {
      accountId: batch.accountId,
      amount: batch.total,
      ...batch.windows,
    })
      // Read first, so the records are written before the account row is locked.
      .where(sql<number>`(select count(*) from new_records)`, '=', batch.records.length)
      .returning('id');
    const theAccount = sql<boolean>`(select count(*) from reserved) = 1`;
    const keys = keysReserved(batch.keySums, batch.windows, theAccount);
    return sql`with new_records as (${records}), reserved as (${reserved}), ${keys.part}
      new_holds as (${db.insertInto('holds').values(batch.holds)}),
      new_entries as (${db.insertInto('journal').values(batch.journal)})
      ${refuseUnless(sql`${theAccount} and ${keys.fit}`, 'the batch does not fit the account')}`;
  },
);

/**
 * `admitAll` for a batch of several accounts: the records, then the accounts' rows locked in id
 * order (the transaction way's order, batched-accounts.ts), each reserved its own sum by the
 * guarded update of `reserveOnAccounts`, the holds and journal entries; refused whole unless
 * every account's sum fits.
 */
export const admitAcrossAccounts = shapedStatement(
  (
    db,
    batch: {
      windows: WindowSlots;
      records: readonly AdmissionItem['record'][];
      holds: readonly HoldTable[];
      journal: readonly JournalTable[];
      /** Each account's sum, in id order. */
      sums: readonly { id: string; amount: number }[];
      /** Each budgeted key's sum, in id order; left out when no claim has a key budget. */
      keySums?: readonly { id: string; amount: number }[] | undefined;
    },
  ) => {
    const records = db.insertInto('requests').values(batch.records).returning('id');
    const locked = lockAccountsInOrder(
      batch.sums.map((sum) => sum.id),
      sql`(select count(*) from new_records) = ${batch.records.length}`,
    );
    const reserved = reserveOnAccountsUpdate(
      idRows('v', ['amount'], batch.sums),
      batch.windows,
      sql`accounts.id in (select id from locked)`,
    );
    const everyAccount = sql<boolean>`(select count(*) from reserved) = ${batch.sums.length}`;
    const keys = keysReserved(batch.keySums, batch.windows, everyAccount);
    return sql`with new_records as (${records}), locked as (${locked}),
      reserved as (${reserved}), ${keys.part}
      new_holds as (${db.insertInto('holds').values(batch.holds)}),
      new_entries as (${db.insertInto('journal').values(batch.journal)})
      ${refuseUnless(sql`${everyAccount} and ${keys.fit}`, 'the batch does not fit its accounts')}`;
  },
);

/**
 * The keys' part of an admission statement (`keys_reserved`, then a comma) and the condition that
 * every key's sum fit, read after the accounts' part (`accountsDone`); nothing and `true` when no
 * claim has a key budget.
 */
function keysReserved(
  keySums: readonly { id: string; amount: number }[] | undefined,
  windows: WindowSlots,
  accountsDone: RawBuilder<boolean>,
): { part: RawBuilder<unknown>; fit: RawBuilder<boolean> } {
  if (keySums === undefined) return { part: sql``, fit: sql<boolean>`true` };
  const update = reserveOnKeysUpdate(idRows('k', ['amount'], keySums), windows, accountsDone);
  return {
    part: sql`keys_reserved as (${update}),`,
    fit: sql<boolean>`(select count(*) from keys_reserved) = ${keySums.length}`,
  };
}

/** Each id's sum, in id order (the order rows are locked in). */
function inIdOrder(sums: ReadonlyMap<string, number>): { id: string; amount: number }[] {
  return [...sums].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, amount]) => ({ id, amount }));
}

function refusedBy(
  why: Awaited<ReturnType<typeof refusalOf>>,
  amount: number,
): { kind: 'refused'; error: ApiError } {
  return {
    kind: 'refused',
    error: why.kind === 'insufficient_funds' ? insufficientFunds(amount) : overBudget(amount, why),
  };
}

function holdRow(item: AdmissionItem, now: number): HoldTable {
  return {
    id: item.record.hold_id,
    account_id: item.record.account_id,
    request_id: item.record.id,
    amount: item.record.reserve_amount,
    state: 'open',
    captured_amount: null,
    price_version: item.record.price_version,
    created_at: now,
    resolved_at: null,
    budget_key_id: item.budgetKeyId,
  };
}

function compareKeys(a: NewRecord, b: NewRecord): number {
  if (a.key_id !== b.key_id) return a.key_id < b.key_id ? -1 : 1;
  if (a.idempotency_key === b.idempotency_key) return 0;
  return a.idempotency_key < b.idempotency_key ? -1 : 1;
}
