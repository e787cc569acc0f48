import { MAX_BALANCE_MICRO_YUAN, MAX_MOVEMENT_MICRO_YUAN } from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { checkLedger } from '../../src/billing/ledger-check.js';
import type { Store } from '../../src/store/database.js';
import { down as removeMoneyBoundTriggers } from '../../src/store/migrations/007-money-bounds.js';
import { down as undoHotPathSchema } from '../../src/store/migrations/030-hot-path-indexes.js';
import type { JournalTable, TopupTable } from '../../src/store/schema.js';
import { describeEachDialect, openTestStore } from '../helpers/dialects.js';

/**
 * The ledger check compared floating-point numbers: past 2^53 a one-micro-yuan difference
 * between an account and its journal (or between balances and top-ups) rounded away, and the
 * check said `ok`. It now reads every amount and sum as text and compares BigInts. The rows
 * here are written with SQL, as corruption from any source would be.
 */
describeEachDialect('exact ledger check on $name', (dialect) => {
  let store: Store;
  let close: () => Promise<void>;
  beforeEach(async () => ({ store, close } = await openTestStore(dialect)));
  afterEach(async () => close());

  let sequence = 0;
  const nextId = (prefix: string) => `${prefix}_${String(++sequence).padStart(8, '0')}`;

  /** An account row with `balance`, plus one top-up row and its journal entry per credit. */
  async function accountCredited(balance: number, credits: readonly number[]): Promise<string> {
    const accountId = nextId('acct');
    await store.db
      .insertInto('accounts')
      .values({
        id: accountId,
        email: `${accountId}@example.test`,
        balance,
        held: 0,
        created_at: 0,
        budget_window_start: 0,
        budget_spent: 0,
        owed: 0,
      })
      .execute();
    const topups: TopupTable[] = [];
    const journal: JournalTable[] = [];
    for (const amount of credits) {
      const topupId = nextId('top');
      topups.push({
        id: topupId,
        account_id: accountId,
        reference: topupId,
        amount,
        source: 'admin',
        created_at: 0,
      });
      journal.push({
        id: nextId('jrn'),
        account_id: accountId,
        kind: 'topup',
        balance_delta: amount,
        held_delta: 0,
        owed_delta: 0,
        hold_id: null,
        request_id: null,
        topup_id: topupId,
        reason: 'test credit',
        created_at: 0,
      });
    }
    if (topups.length > 0) {
      await store.db.insertInto('topups').values(topups).execute();
      await store.db.insertInto('journal').values(journal).execute();
    }
    return accountId;
  }

  /** Migration 007's bounds removed; on SQLite 030 holds some of them as CHECKs: undone first. */
  async function removeMoneyBounds(db: Kysely<unknown>): Promise<void> {
    await undoHotPathSchema(db);
    await removeMoneyBoundTriggers(db);
  }

  it('finds a one-micro-yuan difference between an account and its journal at a small magnitude', async () => {
    const accountId = await accountCredited(100, [60, 41]);
    const report = await checkLedger(store.db);
    expect(report.ok).toBe(false);
    expect(report.violations).toContainEqual({
      invariant: 'journal_replay',
      subject: accountId,
      detail: 'columns 100/0, journal 101/0',
    });
  });

  it('finds a one-micro-yuan difference at 2^52 per row, where the sums pass 2^53', async () => {
    // Rows this large break today's bounds: remove them, as an older version or a script would
    // have written them without.
    await removeMoneyBounds(store.db as unknown as Kysely<unknown>);
    const accountId = await accountCredited(2 ** 53, [2 ** 52, 2 ** 52 + 1]);
    const report = await checkLedger(store.db);
    expect(report.ok).toBe(false);
    expect(report.violations).toContainEqual({
      invariant: 'journal_replay',
      subject: accountId,
      detail: 'columns 9007199254740992/0, journal 9007199254740993/0',
    });
    expect(report.violations).toContainEqual({
      invariant: 'conservation',
      subject: 'all accounts',
      detail: 'balances 9007199254740992, top-ups 9007199254740993 - captured 0',
    });
  });

  it('finds a top-up of one micro-yuan that no balance shows, across accounts at the maximum balance', async () => {
    // Ten accounts at the maximum balance hold 10^16 in all, past 2^53 although every row
    // respects the bounds; each is filled by maximal credits, consistently.
    const credits = Array.from(
      { length: MAX_BALANCE_MICRO_YUAN / MAX_MOVEMENT_MICRO_YUAN },
      () => MAX_MOVEMENT_MICRO_YUAN,
    );
    const accounts: string[] = [];
    for (let index = 0; index < 10; index += 1)
      accounts.push(await accountCredited(MAX_BALANCE_MICRO_YUAN, credits));
    const clean = await checkLedger(store.db);
    expect(clean).toMatchObject({ ok: true, accounts: 10, violations: [] });

    // A top-up row of 1 that credited nobody: money recorded as received, found nowhere.
    await store.db
      .insertInto('topups')
      .values({
        id: nextId('top'),
        account_id: accounts[0] ?? '',
        reference: 'lost',
        amount: 1,
        source: 'admin',
        created_at: 0,
      })
      .execute();
    const report = await checkLedger(store.db);
    expect(report.ok).toBe(false);
    expect(report.violations).toEqual([
      {
        invariant: 'conservation',
        subject: 'all accounts',
        detail: 'balances 10000000000000000, top-ups 10000000000000001 - captured 0',
      },
    ]);
  });

  it('finds a balance above the maximum, written past the bounds by any means', async () => {
    await removeMoneyBounds(store.db as unknown as Kysely<unknown>);
    const over = MAX_BALANCE_MICRO_YUAN + 1;
    const accountId = await accountCredited(over, [over]);
    const report = await checkLedger(store.db);
    expect(report.violations).toContainEqual({
      invariant: 'within_bounds',
      subject: accountId,
      detail: `balance ${over}, held 0, maximum ${MAX_BALANCE_MICRO_YUAN}`,
    });
  });
});
