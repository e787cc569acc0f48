import { sql, type Kysely, type RawBuilder } from 'kysely';
import {
  ACCOUNT_MONEY_COLUMNS,
  budgetWindowStartSql,
  spentInWindowSql,
  type WindowSlots,
} from '../budgets/budget-ledger.js';
import { keyBudgetFits } from '../billing/ledger.js';
import type { AccountTable, Database } from '../store/schema.js';

/**
 * The account rows of a batch that spans several accounts (batched-admission.ts,
 * batched-capture.ts): locked together in one statement, in one fixed order, then updated
 * together in one statement, each row by its own sum with a single movement's guards.
 *
 * Why the fixed order: two transactions that lock the same rows in different orders can wait
 * on each other in a circle (a deadlock, one of them aborted). Every batch, on every instance,
 * locks its accounts sorted by id, after its records or holds and before any key; a single
 * claim or capture locks one account. A multi-row UPDATE alone would lock its rows in whatever
 * order its plan visits them, so the rows are locked first by `select ... order by id for no
 * key update` (PostgreSQL locks the rows of such a select as it returns them, after the sort).
 */

/** The batches' lane (util/keyed-batcher.ts): one for all accounts of this instance. */
export const ALL_ACCOUNTS = 'all accounts';

/** An account row as the admission decides on it, locked. */
export type LockedAccount = Pick<
  AccountTable,
  | 'id'
  | 'balance'
  | 'held'
  | 'budget_limit'
  | 'budget_window'
  | 'budget_window_start'
  | 'budget_spent'
> & { readonly spent_in_window: number };

/** Locks `ids` (distinct) in id order; from here every other writer of them waits for us. */
export async function lockAccounts(
  trx: Kysely<Database>,
  ids: readonly string[],
  windows: WindowSlots,
): Promise<Map<string, LockedAccount>> {
  const rows = await trx
    .selectFrom('accounts')
    .select(['id', ...ACCOUNT_MONEY_COLUMNS, spentInWindowSql(windows).as('spent_in_window')])
    .where('id', 'in', ids)
    .orderBy('id')
    // The mode an UPDATE of the row's other columns takes (a single claim's), not `for update`,
    // which would also make the foreign-key checks of other transactions' new rows naming
    // these accounts (a key, a task, a top-up's journal entry) wait for the batch.
    .forNoKeyUpdate()
    .execute();
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * Adds each account's sum to its `held`, with the guards of a single hold (billing/ledger.ts
 * `reserveAvailable`) on the sum; returns the ids it updated (a guard that refused leaves one
 * out: the caller rolls back).
 */
export async function reserveOnAccounts(
  trx: Kysely<Database>,
  sums: ReadonlyMap<string, number>,
  windows: WindowSlots,
): Promise<Set<string>> {
  const rows = [...sums].map(([id, amount]) => ({ id, amount }));
  const result = await reserveOnAccountsUpdate(idRows('v', ['amount'], rows), windows)
    .$castTo<{ id: string }>()
    .execute(trx);
  return new Set(result.rows.map((row) => row.id));
}

/**
 * Rows of an id and integer columns as a typed row source `alias (id, ...columns)` for the
 * updates below: `v (id, amount)` for accounts, `k (id, amount)` or `k (id, held, spent)` for keys.
 */
export function idRows<Column extends string>(
  alias: 'v' | 'k',
  columns: readonly Column[],
  rows: readonly ({ id: string } & Record<Column, number>)[],
): RawBuilder<unknown> {
  const values = sql.join(
    rows.map(
      (row) =>
        sql`(cast(${row.id} as text), ${sql.join(columns.map((column) => sql`cast(${row[column]} as bigint)`))})`,
    ),
  );
  return sql`(values ${values}) as ${sql.raw(alias)} (id, ${sql.raw(columns.join(', '))})`;
}

/**
 * The update of `reserveOnAccounts`: `sums` is a row source `v (id, amount)`; `also` a further
 * condition on the account row (the one statement's: among the rows it locked).
 */
export function reserveOnAccountsUpdate(
  sums: RawBuilder<unknown>,
  windows: WindowSlots,
  also: RawBuilder<boolean> = sql`true`,
): RawBuilder<unknown> {
  const spent = spentInWindowSql(windows);
  return sql`update accounts set held = held + v.amount,
      budget_spent = ${spent}, budget_window_start = ${budgetWindowStartSql(windows)}
    from ${sums}
    where accounts.id = v.id and balance - held >= v.amount
      and (budget_limit is null or ${spent} + held + v.amount <= budget_limit) and ${also}
    returning accounts.id`;
}

/**
 * Charges each account `charge` out of `unheld` released from its holds (billing/ledger.ts
 * `chargeHeld` with no extra: each charge is within its holds); returns the ids it updated.
 */
export async function chargeAccounts(
  trx: Kysely<Database>,
  sums: ReadonlyMap<string, { readonly charge: number; readonly unheld: number }>,
  windows: WindowSlots,
): Promise<Set<string>> {
  const values = sql.join(
    [...sums].map(
      ([id, sum]) =>
        sql`(cast(${id} as text), cast(${sum.charge} as bigint), cast(${sum.unheld} as bigint))`,
    ),
  );
  const result = await chargeAccountsUpdate(
    sql`(values ${values}) as v (id, charge, unheld)`,
    windows,
  )
    .$castTo<{ id: string }>()
    .execute(trx);
  return new Set(result.rows.map((row) => row.id));
}

/**
 * The update of `chargeAccounts`: `sums` is a row source `v (id, charge, unheld)`; `also` a
 * further condition on the account row (the one statement's: among the rows it locked).
 */
export function chargeAccountsUpdate(
  sums: RawBuilder<unknown>,
  windows: WindowSlots,
  also: RawBuilder<boolean> = sql`true`,
): RawBuilder<unknown> {
  return sql`update accounts set balance = balance - v.charge,
      held = held - v.unheld, budget_spent = ${spentInWindowSql(windows)} + v.charge,
      budget_window_start = ${budgetWindowStartSql(windows)}
    from ${sums}
    where accounts.id = v.id and balance - held >= 0 and ${also}
    returning accounts.id`;
}

/**
 * For the one statement (requests/one-statement.ts): reserves each key's sum against its budget
 * with a single hold's guard on the sum (billing/ledger.ts `reserveKeyBudget`, `keyBudgetFits`).
 * `sums` is a row source `k (id, amount)`; `after` a condition reading the accounts' part, so the
 * keys are locked after the accounts (the single claim's order). Any lock order among the keys is
 * safe: a key belongs to one account, whose row the statement holds by then, and nothing that
 * locks a key waits for anything else while holding it. Returns the ids it updated.
 */
export function reserveOnKeysUpdate(
  sums: RawBuilder<unknown>,
  windows: WindowSlots,
  after: RawBuilder<boolean>,
): RawBuilder<unknown> {
  return sql`update api_keys set budget_held = budget_held + k.amount,
      budget_spent = ${spentInWindowSql(windows)}, budget_window_start = ${budgetWindowStartSql(windows)}
    from ${sums}
    where api_keys.id = k.id and ${keyBudgetFits({ amount: sql<number>`k.amount`, ...windows })}
      and ${after}
    returning api_keys.id`;
}

/**
 * For the one statement: gives back what each key's captured holds reserved against its budget
 * and counts what they charged (billing/ledger.ts `resolveKeyBudget`, summed per key). `sums` is a
 * row source `k (id, held, spent)`; `after` a condition reading the accounts' part (the single
 * capture's order: holds, accounts, keys, records). Returns the ids it updated.
 */
export function resolveOnKeysUpdate(
  sums: RawBuilder<unknown>,
  windows: WindowSlots,
  after: RawBuilder<boolean>,
): RawBuilder<unknown> {
  return sql`update api_keys set budget_held = budget_held - k.held,
      budget_spent = ${spentInWindowSql(windows)} + k.spent,
      budget_window_start = ${budgetWindowStartSql(windows)}
    from ${sums}
    where api_keys.id = k.id and ${after}
    returning api_keys.id`;
}

/**
 * The rows of `ids` locked in id order inside one statement (requests/one-statement.ts), once
 * `after` holds (a condition reading the statement's earlier part, so that part is written
 * first: a single claim's or capture's lock order). A part `locked (id)` for the updates above.
 */
export function lockAccountsInOrder(
  ids: readonly string[],
  after: RawBuilder<boolean>,
): RawBuilder<unknown> {
  return sql`select id from accounts
    where id in (${sql.join(ids.map((id) => sql`cast(${id} as text)`))}) and ${after}
    order by id for no key update`;
}

/** The distinct values of `of` over `items`, sorted (statements and key locks in one order). */
export function sortedDistinct<Item>(items: readonly Item[], of: (item: Item) => string): string[] {
  return [...new Set(items.map(of))].sort();
}
