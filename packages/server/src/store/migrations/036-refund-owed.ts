import { sql, type Kysely } from 'kysely';

/**
 * A refund that could not be taken back stays owed (docs/payments.md, "Refunds"):
 * `accounts.owed` is what the account still owes, paid off from the next money that becomes
 * available (a released hold, the unused part of a capture, a top-up); `journal.owed_delta`
 * journals every change of it, so the ledger check replays `owed` like `balance` and `held`.
 *
 * Before this migration the part of a refund that could not be taken was only written on its
 * order (`refund_owed`) for an operator to settle. It is carried over as the account's `owed`,
 * and what the account has available now pays it off at once (one `refund` journal entry per
 * such account), so the rule "an account that owes has nothing available" holds from the start.
 * The way back puts what is still owed back on the orders (oldest first keep theirs), so the
 * earlier rule (journal refunds = refunded − owed on the orders) holds again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('accounts')
    .addColumn('owed', 'bigint', (column) =>
      column
        .notNull()
        .defaultTo(0)
        .check(sql`owed >= 0`),
    )
    .execute();
  await db.schema
    .alterTable('journal')
    .addColumn('owed_delta', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();

  const base = db as unknown as Kysely<OwedTables>;
  const owing = await base
    .selectFrom('payment_orders')
    .innerJoin('accounts', 'accounts.id', 'payment_orders.account_id')
    .select([
      'accounts.id as id',
      'accounts.balance as balance',
      'accounts.held as held',
      sql<string>`cast(sum(payment_orders.refund_owed) as text)`.as('owed'),
    ])
    .groupBy(['accounts.id', 'accounts.balance', 'accounts.held'])
    .having(sql<boolean>`sum(payment_orders.refund_owed) > 0`)
    .orderBy('accounts.id')
    .execute();
  const now = Date.now();
  for (const account of owing) {
    const owed = exactInteger(account.owed, account.id);
    const available =
      exactInteger(account.balance, account.id) - exactInteger(account.held, account.id);
    const paid = Math.max(0, Math.min(owed, available));
    await base
      .updateTable('accounts')
      .set({ balance: sql`balance - ${paid}`, owed: owed - paid })
      .where('id', '=', account.id)
      .execute();
    await base
      .insertInto('journal')
      .values({
        // The time too: a way back and up again carries over once more, under a new id.
        id: `jrn_036_${account.id}_${now}`,
        account_id: account.id,
        kind: 'refund',
        balance_delta: -paid,
        held_delta: 0,
        owed_delta: owed - paid,
        hold_id: null,
        request_id: null,
        topup_id: null,
        reason: `refunds owed before migration 036 (${owed} micro-yuan): ${paid} taken from the available balance, ${owed - paid} still owed`,
        created_at: now,
      })
      .execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const base = db as unknown as Kysely<OwedTables>;
  const orders = await base
    .selectFrom('payment_orders')
    .innerJoin('accounts', 'accounts.id', 'payment_orders.account_id')
    .select([
      'payment_orders.id as id',
      'payment_orders.account_id as account_id',
      'payment_orders.refund_owed as refund_owed',
      'accounts.owed as owed',
    ])
    .where('payment_orders.refund_owed', '>', 0)
    .orderBy('payment_orders.account_id')
    .orderBy('payment_orders.created_at', 'desc')
    .orderBy('payment_orders.id', 'desc')
    .execute();
  // Per account, the newest orders keep what is still owed; what was paid off leaves the rest.
  const left = new Map<string, number>();
  for (const order of orders) {
    const owed = left.get(order.account_id) ?? exactInteger(order.owed, order.account_id);
    const kept = Math.min(owed, exactInteger(order.refund_owed, order.id));
    left.set(order.account_id, owed - kept);
    if (kept !== exactInteger(order.refund_owed, order.id))
      await base
        .updateTable('payment_orders')
        .set({ refund_owed: kept })
        .where('id', '=', order.id)
        .execute();
  }
  await db.schema.alterTable('journal').dropColumn('owed_delta').execute();
  await db.schema.alterTable('accounts').dropColumn('owed').execute();
}

/** A bigint column as it comes from either driver (number or decimal text), exactly. */
function exactInteger(value: number | string, subject: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number))
    throw new Error(`${subject}: ${String(value)} is not an amount`);
  return number;
}

/** The columns this migration reads and writes, as they are at 036. */
interface OwedTables {
  accounts: {
    id: string;
    balance: number | string;
    held: number | string;
    owed: number | string;
  };
  payment_orders: {
    id: string;
    account_id: string;
    refund_owed: number | string;
    created_at: number;
  };
  journal: {
    id: string;
    account_id: string;
    kind: string;
    balance_delta: number;
    held_delta: number;
    owed_delta: number;
    hold_id: string | null;
    request_id: string | null;
    topup_id: string | null;
    reason: string;
    created_at: number;
  };
}
