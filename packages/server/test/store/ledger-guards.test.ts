import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { AccountService } from '../../src/accounts/account-service.js';
import { checkLedger } from '../../src/billing/ledger-check.js';
import { captureHold, placeHold, releaseHold } from '../../src/billing/ledger.js';
import { openStore, type Store } from '../../src/store/database.js';
import { createIdGenerator } from '../../src/util/effects.js';
import { describeEachDialect, dropSchema, openTestStore } from '../helpers/dialects.js';
import { manualClock } from '../helpers/clock.js';

describeEachDialect('ledger guards on $name', (dialect) => {
  let store: Store;
  let close: () => Promise<void>;
  const clock = manualClock();
  const effects = { clock, ids: createIdGenerator(clock) };

  beforeEach(async () => ({ store, close } = await openTestStore(dialect)));
  afterEach(async () => {
    const report = await checkLedger(store.db);
    expect(report.violations).toEqual([]);
    await close();
  });

  async function fundedAccount(amount: number): Promise<string> {
    const accounts = new AccountService(store.db, effects);
    const account = await accounts.create({ email: `${effects.ids.next('e')}@example.test` });
    if (amount > 0) await accounts.topUp(account.id, { amount, reference: 'initial' });
    return account.id;
  }

  const hold = (accountId: string, amount: number, requestId: string) =>
    store.db
      .transaction()
      .execute((trx) =>
        placeHold(trx, effects, { accountId, amount, requestId, priceVersion: 'm@1' }),
      )
      .then((outcome) => (outcome.kind === 'placed' ? outcome.holdId : null));
  const balances = (accountId: string) =>
    store.db
      .selectFrom('accounts')
      .select(['balance', 'held'])
      .where('id', '=', accountId)
      .executeTakeFirstOrThrow();

  it('refuses a hold larger than what is available and changes nothing', async () => {
    const accountId = await fundedAccount(100);
    expect(await hold(accountId, 60, 'r1')).not.toBeNull();
    expect(await hold(accountId, 41, 'r2')).toBeNull();
    expect(await balances(accountId)).toEqual({ balance: 100, held: 60 });
  });

  it('captures a hold at most once, and releases nothing after a capture', async () => {
    const accountId = await fundedAccount(100);
    const holdId = (await hold(accountId, 50, 'r1')) ?? '';
    const first = await store.db
      .transaction()
      .execute((trx) => captureHold(trx, effects, { holdId, amount: 30, reason: 't' }));
    const second = await store.db
      .transaction()
      .execute((trx) => captureHold(trx, effects, { holdId, amount: 30, reason: 't' }));
    const released = await store.db
      .transaction()
      .execute((trx) => releaseHold(trx, effects, { holdId, reason: 't' }));
    expect([first, second, released]).toEqual(['captured', 'already_resolved', false]);
    expect(await balances(accountId)).toEqual({ balance: 70, held: 0 });
  });

  it('charges above the hold only when the difference is available', async () => {
    const accountId = await fundedAccount(100);
    const holdId = (await hold(accountId, 50, 'r1')) ?? '';
    await hold(accountId, 40, 'r2');
    const tooMuch = await store.db
      .transaction()
      .execute((trx) => captureHold(trx, effects, { holdId, amount: 61, reason: 't' }));
    expect(tooMuch).toBe('insufficient_funds');
    expect(await balances(accountId)).toEqual({ balance: 100, held: 90 });
    const exact = await store.db
      .transaction()
      .execute((trx) => captureHold(trx, effects, { holdId, amount: 60, reason: 't' }));
    expect(exact).toBe('captured');
    expect(await balances(accountId)).toEqual({ balance: 40, held: 40 });
  });

  it('resolves a hold once when two captures race', async () => {
    const accountId = await fundedAccount(1_000);
    const holdId = (await hold(accountId, 500, 'r1')) ?? '';
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () =>
        store.db
          .transaction()
          .execute((trx) => captureHold(trx, effects, { holdId, amount: 400, reason: 't' })),
      ),
    );
    expect(outcomes.filter((outcome) => outcome === 'captured')).toHaveLength(1);
    expect(await balances(accountId)).toEqual({ balance: 600, held: 0 });
  });

  it('keeps one hold per request', async () => {
    const accountId = await fundedAccount(1_000);
    await hold(accountId, 10, 'same');
    await expect(hold(accountId, 10, 'same')).rejects.toThrow();
    expect(await balances(accountId)).toEqual({ balance: 1_000, held: 10 });
  });

  it('makes a top-up once per reference, and refuses the reference for another amount', async () => {
    const accounts = new AccountService(store.db, effects);
    const accountId = await fundedAccount(0);
    const first = await accounts.topUp(accountId, { amount: 500, reference: 'inv-1' });
    const again = await accounts.topUp(accountId, { amount: 500, reference: 'inv-1' });
    expect([first.balance, first.replayed, again.balance, again.replayed]).toEqual([
      500,
      false,
      500,
      true,
    ]);
    await expect(
      accounts.topUp(accountId, { amount: 501, reference: 'inv-1' }),
    ).rejects.toMatchObject({ code: 'IDEMPOTENCY_CONFLICT' });
  });

  it('detects a tampered balance with the ledger check', async () => {
    const accountId = await fundedAccount(100);
    await store.db
      .updateTable('accounts')
      .set({ balance: 101 })
      .where('id', '=', accountId)
      .execute();
    const report = await checkLedger(store.db);
    expect(report.ok).toBe(false);
    expect(report.violations.map((violation) => violation.invariant)).toEqual(
      expect.arrayContaining(['journal_replay', 'conservation']),
    );
    await store.db
      .updateTable('accounts')
      .set({ balance: 100 })
      .where('id', '=', accountId)
      .execute();
  });

  it('applies migrations once: reopening the same database changes nothing', async () => {
    // A database of its own, opened twice (an in-memory SQLite database cannot be reopened).
    // The tables are read in the store's own schema only: a scan of every schema of a shared
    // PostgreSQL (Kysely's introspection) fails when another suite drops its schema meanwhile.
    const directory = mkdtempSync(path.join(tmpdir(), 'tollgate-reopen-'));
    const fresh =
      dialect.name === 'sqlite'
        ? { databaseUrl: path.join(directory, 'tollgate.db') }
        : dialect.fresh();
    const options = {
      url: fresh.databaseUrl,
      ...(fresh.postgresSchema === undefined ? {} : { postgresSchema: fresh.postgresSchema }),
    };
    const appliedMigrations = async (opened: Store) =>
      (
        await opened.db
          .selectFrom('kysely_migration' as 'accounts')
          .select(sql<string>`name`.as('name'))
          .execute()
      ).map((row) => row.name);
    try {
      const first = await openStore(options);
      const before = await appliedMigrations(first);
      await new AccountService(first.db, effects).create({ email: 'kept@example.com' });
      await first.close();
      const second = await openStore(options);
      try {
        expect(before.length).toBeGreaterThan(20);
        expect(await appliedMigrations(second)).toEqual(before);
        for (const table of ['accounts', 'holds', 'journal', 'requests', 'model_prices'] as const) {
          await second.db
            .selectFrom(table)
            .select(sql`1`.as('one'))
            .limit(1)
            .execute();
        }
        const accounts = await second.db.selectFrom('accounts').select('email').execute();
        expect(accounts.map((account) => account.email)).toEqual(['kept@example.com']);
        expect((await checkLedger(second.db)).violations).toEqual([]);
      } finally {
        await second.close();
      }
    } finally {
      await dropSchema(fresh.postgresSchema);
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
