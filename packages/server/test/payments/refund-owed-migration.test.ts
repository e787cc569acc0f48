import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { checkLedger } from '../../src/billing/ledger-check.js';
import type { Store } from '../../src/store/database.js';
import { migrationProvider } from '../../src/store/migrations/index.js';
import { describeEachDialect, openTestStore } from '../helpers/dialects.js';
import { migratorOf } from '../helpers/schema-checks.js';

/**
 * Refunds owed before migration 036 were only written on their orders for an operator. The
 * migration carries them over as the account's `owed`, pays what the account has available now,
 * and leaves a ledger the new check finds clean (issue 35, item 4).
 */
describeEachDialect('migration 036 carrying owed refunds over on $name', (dialect) => {
  let opened: { store: Store; close: () => Promise<void> } | undefined;
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });

  it('an order owing 4 of an account with 3 available: 3 paid at once, 1 still owed, journalled', async () => {
    opened = await openTestStore(dialect);
    const { db } = opened.store;
    const names = Object.keys(await migrationProvider.getMigrations()).sort();
    const before = names[names.indexOf('036-refund-owed') - 1] ?? '';
    const migrations = await migratorOf(opened.store);
    expect((await migrations.migrateTo(before)).error).toBeUndefined();

    // As the old code left it: 10 paid, 4 spent, a full refund took the 6 available (4 owed on
    // the order), then an operator's top-up of 3.
    const rows: [string, Record<string, unknown>[]][] = [
      [
        'accounts',
        [{ id: 'acct_old', email: 'old@example.test', balance: 3, held: 0, created_at: 0 }],
      ],
      [
        'topups',
        [
          { id: 'top_pay', account_id: 'acct_old', reference: 'payment:pay_old', amount: 10 },
          { id: 'top_ops', account_id: 'acct_old', reference: 'ops', amount: 3 },
        ].map((row) => ({ ...row, source: 'admin', created_at: 0 })),
      ],
      [
        'holds',
        [
          {
            id: 'hold_old',
            account_id: 'acct_old',
            request_id: 'req_old',
            amount: 4,
            state: 'captured',
            captured_amount: 4,
            price_version: 'pv',
            created_at: 0,
            resolved_at: 0,
          },
        ],
      ],
      [
        'journal',
        [
          ['j1', 'topup', 10, 0, null, 'top_pay'],
          ['j2', 'hold', 0, 4, 'hold_old', null],
          ['j3', 'capture', -4, -4, 'hold_old', null],
          ['j4', 'refund', -6, 0, null, null],
          ['j5', 'topup', 3, 0, null, 'top_ops'],
        ].map(([id, kind, balance, held, hold, topup]) => ({
          id,
          account_id: 'acct_old',
          kind,
          balance_delta: balance,
          held_delta: held,
          hold_id: hold,
          request_id: hold === null ? null : 'req_old',
          topup_id: topup,
          reason: 'before 036',
          created_at: 0,
        })),
      ],
      [
        'payment_orders',
        [
          {
            id: 'pay_old',
            account_id: 'acct_old',
            provider: 'stripe',
            amount: 10,
            currency: 'cny',
            state: 'refunded',
            refunded_amount: 10,
            refund_owed: 4,
            created_at: 0,
            updated_at: 0,
          },
        ],
      ],
    ];
    for (const [table, values] of rows) {
      const columns = Object.keys(values[0] ?? {});
      await sql`insert into ${sql.table(table)} (${sql.join(columns.map((column) => sql.ref(column)))})
        values ${sql.join(
          values.map((row) => sql`(${sql.join(columns.map((column) => row[column]))})`),
        )}`.execute(db);
    }

    expect((await migrations.migrateToLatest()).error).toBeUndefined();
    const account = await db
      .selectFrom('accounts')
      .select(['balance', 'held', 'owed'])
      .where('id', '=', 'acct_old')
      .executeTakeFirstOrThrow();
    expect(account).toEqual({ balance: 0, held: 0, owed: 1 });
    const carried = await db
      .selectFrom('journal')
      .select(['kind', 'balance_delta', 'owed_delta'])
      .where('id', 'like', 'jrn_036_acct_old_%')
      .execute();
    expect(carried).toEqual([{ kind: 'refund', balance_delta: -3, owed_delta: 1 }]);
    expect((await checkLedger(db)).violations).toEqual([]);

    // And back: what is still owed returns to the order; up again carries only that over.
    expect((await migrations.migrateTo(before)).error).toBeUndefined();
    const order = await sql<{ refund_owed: number | string }>`select refund_owed from
      payment_orders where id = 'pay_old'`.execute(db);
    expect(Number(order.rows[0]?.refund_owed)).toBe(1);
    expect((await migrations.migrateToLatest()).error).toBeUndefined();
    expect(
      await db
        .selectFrom('accounts')
        .select(['balance', 'held', 'owed'])
        .where('id', '=', 'acct_old')
        .executeTakeFirstOrThrow(),
    ).toEqual({ balance: 0, held: 0, owed: 1 });
    expect((await checkLedger(db)).violations).toEqual([]);
  });
});
