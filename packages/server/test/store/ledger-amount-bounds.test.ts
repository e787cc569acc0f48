import { randomUUID } from 'node:crypto';
import { MAX_BALANCE_MICRO_YUAN, MAX_MOVEMENT_MICRO_YUAN } from '@tollgate/protocol';
import { Migrator, sql, type Insertable } from 'kysely';
import type { AccountTable } from '../../src/store/schema.js';
import { afterEach, expect, it } from 'vitest';
import { migrationProvider } from '../../src/store/migrations/index.js';
import { describeEachDialect, openTestStore } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Amounts past 2^53 corrupted the ledger unseen: SQLite added a bound double to the balance and
 * rounded it, while the journal's integers summed exactly. Balances and movements are now
 * bounded far below 2^53, by the services (a 400 naming the field, nothing moves) and by the
 * database (a constraint or trigger refuses any other writer).
 */
describeEachDialect('money bounds on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  const post = (url: string, payload: object) =>
    gateway?.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload,
    });
  const journalRows = async () =>
    Number(
      (
        await gateway?.services.store.db
          .selectFrom('journal')
          .select((eb) => eb.fn.countAll<number | string>().as('count'))
          .executeTakeFirstOrThrow()
      )?.count,
    );
  /** An account filled to `balance` through the service, one maximal top-up at a time. */
  async function accountAt(balance: number): Promise<string> {
    if (gateway === undefined) throw new Error('no gateway');
    const { accountId } = await gateway.account(0);
    for (let left = balance; left > 0; left -= MAX_MOVEMENT_MICRO_YUAN) {
      await gateway.services.accounts.topUp(accountId, {
        amount: Math.min(left, MAX_MOVEMENT_MICRO_YUAN),
        reference: randomUUID(),
      });
    }
    return accountId;
  }

  it('refuses the top-ups of the reported corruption (2^53 - 1 twice, then 1): nothing moves', async () => {
    gateway = await startGateway(dialect);
    const { accountId } = await gateway.account(0);
    const huge = await post(`/admin/v1/accounts/${accountId}/topups`, {
      amount: Number.MAX_SAFE_INTEGER,
      reference: 'wire-1',
    });
    expect(huge?.statusCode).toBe(400);
    expect(huge?.json()).toMatchObject({
      error: {
        code: 'INVALID_INPUT',
        param: 'amount',
        message: expect.stringContaining(`at most ${MAX_MOVEMENT_MICRO_YUAN}`),
        request_id: expect.stringMatching(/^req_/),
      },
    });
    const justAbove = await post(`/admin/v1/accounts/${accountId}/topups`, {
      amount: MAX_MOVEMENT_MICRO_YUAN + 1,
      reference: 'wire-2',
    });
    expect(justAbove?.statusCode).toBe(400);
    expect(await gateway.balance(accountId)).toEqual({ balance: 0, held: 0, available: 0 });
    expect(await journalRows()).toBe(0);
    const atMaximum = await post(`/admin/v1/accounts/${accountId}/topups`, {
      amount: MAX_MOVEMENT_MICRO_YUAN,
      reference: 'wire-1',
    });
    expect(atMaximum?.statusCode).toBe(200);
    expect(atMaximum?.json()).toMatchObject({ balance: MAX_MOVEMENT_MICRO_YUAN });
  });

  it('refuses a top-up that would take the balance past the maximum, as a whole', async () => {
    gateway = await startGateway(dialect);
    const accountId = await accountAt(MAX_BALANCE_MICRO_YUAN - 5);
    const before = await journalRows();
    const over = await post(`/admin/v1/accounts/${accountId}/topups`, {
      amount: 6,
      reference: 'one-too-many',
    });
    expect(over?.statusCode).toBe(400);
    expect(over?.json()).toMatchObject({
      error: {
        code: 'INVALID_INPUT',
        param: 'amount',
        message: expect.stringContaining(`maximum balance of ${MAX_BALANCE_MICRO_YUAN}`),
      },
    });
    expect((await gateway.balance(accountId)).balance).toBe(MAX_BALANCE_MICRO_YUAN - 5);
    expect(await journalRows()).toBe(before);
    // The refused reference left no top-up row behind: it can be used for the amount that fits.
    const fits = await post(`/admin/v1/accounts/${accountId}/topups`, {
      amount: 5,
      reference: 'one-too-many',
    });
    expect(fits?.statusCode).toBe(200);
    expect(fits?.json()).toMatchObject({ balance: MAX_BALANCE_MICRO_YUAN, replayed: false });
  });

  it('refuses a redemption past the maximum balance, and the code stays redeemable', async () => {
    gateway = await startGateway(dialect);
    const full = await accountAt(MAX_BALANCE_MICRO_YUAN - 10);
    const code = String(
      (await gateway.admin('POST', '/admin/v1/redemption-codes', { amount: 11 }))['code'],
    );
    const refused = await post(`/admin/v1/accounts/${full}/redemptions`, { code });
    expect(refused?.statusCode).toBe(400);
    expect(refused?.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'code' } });
    expect((await gateway.balance(full)).balance).toBe(MAX_BALANCE_MICRO_YUAN - 10);
    const { accountId: other } = await gateway.account(0);
    const redeemed = await post(`/admin/v1/accounts/${other}/redemptions`, { code });
    expect(redeemed?.statusCode).toBe(200);
    expect(redeemed?.json()).toMatchObject({ balance: 11 });
  });

  it('refuses a redemption code worth more than one movement at creation', async () => {
    gateway = await startGateway(dialect);
    const response = await post('/admin/v1/redemption-codes', {
      amount: MAX_MOVEMENT_MICRO_YUAN + 1,
    });
    expect(response?.statusCode).toBe(400);
    expect(response?.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'amount' } });
    const codes = await gateway.services.store.db
      .selectFrom('redemption_codes')
      .select('id')
      .execute();
    expect(codes).toEqual([]);
  });

  it('refuses, in the database, amounts past the bounds written by any other path', async () => {
    gateway = await startGateway(dialect);
    const accountId = await accountAt(MAX_MOVEMENT_MICRO_YUAN);
    const db = gateway.services.store.db;
    const attempts: [string, () => Promise<unknown>][] = [
      [
        'balance',
        () =>
          db
            .updateTable('accounts')
            .set({ balance: MAX_BALANCE_MICRO_YUAN + 1 })
            .where('id', '=', accountId)
            .execute(),
      ],
      [
        'held',
        () =>
          db
            .updateTable('accounts')
            .set({ held: MAX_BALANCE_MICRO_YUAN + 1 })
            .where('id', '=', accountId)
            .execute(),
      ],
      [
        'top-up amount',
        () =>
          db
            .insertInto('topups')
            .values({
              id: 'top_x',
              account_id: accountId,
              reference: 'x',
              amount: MAX_MOVEMENT_MICRO_YUAN + 1,
              source: 'admin',
              created_at: 0,
            })
            .execute(),
      ],
      [
        'credit journal entry',
        () =>
          db
            .insertInto('journal')
            .values({
              id: 'jrn_x',
              account_id: accountId,
              kind: 'topup',
              balance_delta: MAX_MOVEMENT_MICRO_YUAN + 1,
              held_delta: 0,
              owed_delta: 0,
              hold_id: null,
              request_id: null,
              topup_id: null,
              reason: 'x',
              created_at: 0,
            })
            .execute(),
      ],
      [
        'hold amount',
        () =>
          db
            .insertInto('holds')
            .values({
              id: 'hold_x',
              account_id: accountId,
              request_id: 'req_x',
              amount: MAX_BALANCE_MICRO_YUAN + 1,
              state: 'open',
              captured_amount: null,
              price_version: 'm@1',
              created_at: 0,
              resolved_at: null,
            })
            .execute(),
      ],
      [
        'redemption code of 0',
        () =>
          db
            .insertInto('redemption_codes')
            .values({
              id: 'rdm_x',
              code_hash: 'x',
              amount: 0,
              created_at: 0,
              expires_at: null,
              redeemed_by: null,
              redeemed_at: null,
            })
            .execute(),
      ],
    ];
    for (const [what, attempt] of attempts) {
      await expect(attempt(), what).rejects.toThrow(/bounds/);
    }
    expect(await gateway.balance(accountId)).toEqual({
      balance: MAX_MOVEMENT_MICRO_YUAN,
      held: 0,
      available: MAX_MOVEMENT_MICRO_YUAN,
    });
  });
});

describeEachDialect('the money-bounds migration on $name', (dialect) => {
  it('refuses to apply over rows already past the bounds, naming the table, and changes nothing', async () => {
    const { store, close } = await openTestStore(dialect);
    try {
      // PostgreSQL: the migrator must look in the test's own schema, as openStore's does.
      const schema =
        store.dialect === 'postgres'
          ? (await sql<{ name: string }>`select current_schema() as name`.execute(store.db)).rows[0]
              ?.name
          : undefined;
      const migrator = new Migrator({
        // Its own schema's tables only: Kysely's introspection of every schema fails when
        // another suite drops one meanwhile (schema "t_…" does not exist).
        db: store.migrationDb ?? store.db,
        provider: migrationProvider,
        ...(schema === undefined ? {} : { migrationTableSchema: schema }),
      });
      const down = await migrator.migrateTo('006-key-rotation');
      expect(down.error).toBeUndefined();
      await store.db
        .insertInto('accounts')
        // The table as of migration 006: the budget columns (019) do not exist yet.
        .values({
          id: 'acct_old',
          email: 'old@example.test',
          balance: 2 ** 53,
          held: 0,
          created_at: 0,
        } as Insertable<AccountTable>)
        .execute();
      const up = await migrator.migrateToLatest();
      expect(String(up.error)).toMatch(/1 row\(s\) of accounts break accounts_money_bounds/);
      // Nothing was applied: the row is still there, and no bound is enforced yet.
      await store.db
        .updateTable('accounts')
        .set({ balance: 2 ** 53 + 2 })
        .execute();
      const stored = await store.db
        .selectFrom('accounts')
        .select('balance')
        .where('id', '=', 'acct_old')
        .executeTakeFirstOrThrow();
      expect(BigInt(stored.balance)).toBe(2n ** 53n + 2n);
    } finally {
      await close();
    }
  });
});
