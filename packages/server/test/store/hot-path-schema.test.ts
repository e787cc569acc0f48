import { MAX_BALANCE_MICRO_YUAN } from '@tollgate/protocol';
import { sql, type Kysely } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { checkLedger } from '../../src/billing/ledger-check.js';
import { captureHold, placeHold } from '../../src/billing/ledger.js';
import { credit } from '../../src/billing/account-money.js';
import type { Store } from '../../src/store/database.js';
import type { Database } from '../../src/store/schema.js';
import { createIdGenerator, systemClock } from '../../src/util/effects.js';
import { describeEachDialect, openTestStore } from '../helpers/dialects.js';
import { migratorOf, sqlitePlanOf } from '../helpers/schema-checks.js';

/**
 * Migration 030 (issue 19) takes indexes off the hot path and, on SQLite, rebuilds `holds` and
 * `journal` as WITHOUT ROWID tables whose money bounds are CHECK constraints instead of
 * triggers. The risks: a rebuild that loses rows or a guard (the bounds, one hold per request),
 * a way back that does not restore what earlier migrations' own way back expects, and a query
 * left without the index it needs.
 */
const effects = { clock: systemClock, ids: createIdGenerator(systemClock) };

describeEachDialect('the hot-path schema migration on $name', (dialect) => {
  let opened: { store: Store; close: () => Promise<void> } | undefined;
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });

  /** An account with a top-up and `count` captured requests: holds and journal entries. */
  async function paidRequests(db: Kysely<Database>, count: number): Promise<string> {
    const accountId = effects.ids.next('acct');
    await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('accounts')
        .values({
          id: accountId,
          email: `${accountId}@example.test`,
          balance: 0,
          held: 0,
          created_at: 0,
          budget_limit: null,
          budget_window: null,
          budget_window_start: 0,
          budget_spent: 0,
          owed: 0,
        })
        .execute();
      const topupId = effects.ids.next('top');
      await trx
        .insertInto('topups')
        .values({
          id: topupId,
          account_id: accountId,
          reference: topupId,
          amount: 1_000_000,
          source: 'admin',
          created_at: 0,
        })
        .execute();
      await credit(trx, effects, {
        accountId,
        amount: 1_000_000,
        kind: 'topup',
        topupId,
        reason: 'test',
      });
    });
    for (let index = 0; index < count; index += 1) {
      await db.transaction().execute(async (trx) => {
        const requestId = `req_${accountId}_${index}`;
        const placed = await placeHold(trx, effects, {
          accountId,
          amount: 100,
          requestId,
          priceVersion: 'pv',
        });
        if (placed.kind !== 'placed') throw new Error(placed.kind);
        expect(
          await captureHold(trx, effects, { holdId: placed.holdId, amount: 60, reason: 'test' }),
        ).toBe('captured');
      });
    }
    return accountId;
  }

  const rowCounts = async (db: Kysely<Database>) => ({
    holds: (await db.selectFrom('holds').select('id').execute()).length,
    journal: (await db.selectFrom('journal').select('id').execute()).length,
  });

  /** The guards the rebuild must keep: the money bounds and one hold per request. */
  async function expectGuards(db: Kysely<Database>, accountId: string): Promise<void> {
    const entry = {
      id: effects.ids.next('jrn'),
      account_id: accountId,
      kind: 'hold' as const,
      balance_delta: MAX_BALANCE_MICRO_YUAN + 1,
      held_delta: 0,
      owed_delta: 0,
      hold_id: null,
      request_id: null,
      topup_id: null,
      reason: 'past the bound',
      created_at: 0,
    };
    await expect(db.insertInto('journal').values(entry).execute()).rejects.toThrow(/bounds/);
    const hold = await db
      .selectFrom('holds')
      .select(['id', 'request_id'])
      .executeTakeFirstOrThrow();
    await expect(
      db.updateTable('holds').set({ captured_amount: -1 }).where('id', '=', hold.id).execute(),
    ).rejects.toThrow(/bounds/);
    await expect(
      db.transaction().execute((trx) =>
        placeHold(trx, effects, {
          accountId,
          amount: 1,
          requestId: hold.request_id,
          priceVersion: 'pv',
        }),
      ),
    ).rejects.toThrow(/unique|duplicate/i);
  }

  async function sqliteDefinition(db: Kysely<Database>, table: string): Promise<string> {
    const found = await sql<{
      sql: string;
    }>`select sql from sqlite_master where type = 'table' and name = ${table}`.execute(db);
    return found.rows[0]?.sql ?? '';
  }

  /** Rows in their primary key's B-tree, the bounds as constraints: no trigger left per row. */
  async function expectRebuilt(db: Kysely<Database>): Promise<void> {
    for (const table of ['holds', 'journal']) {
      expect(await sqliteDefinition(db, table)).toMatch(
        /_bounds" check \(not \([^]+\) WITHOUT ROWID$/,
      );
      const triggers = await sql<{
        name: string;
      }>`select name from sqlite_master where type = 'trigger' and tbl_name = ${table}`.execute(db);
      expect(triggers.rows).toEqual([]);
    }
  }

  it('keeps every hold, journal entry and guard through the rebuild and back', async () => {
    opened = await openTestStore(dialect);
    const { db } = opened.store;
    const migrations = await migratorOf(opened.store);
    // Written by today's money code (which writes columns later migrations add, such as 036's
    // `owed`), then taken back to before the rebuild and through it again.
    const accountId = await paidRequests(db, 5);
    const before = await rowCounts(db);
    expect(before).toEqual({ holds: 5, journal: 11 });
    expect((await migrations.migrateTo('024-result-sources')).error).toBeUndefined();
    expect(await rowCounts(db)).toEqual(before);

    expect((await migrations.migrateToLatest()).error).toBeUndefined();
    expect(await rowCounts(db)).toEqual(before);
    expect((await checkLedger(db)).violations).toEqual([]);
    await expectGuards(db, accountId);
    if (opened.store.dialect === 'sqlite') await expectRebuilt(db);
    // New requests on the rebuilt tables keep the ledger clean.
    await paidRequests(db, 3);
    expect((await checkLedger(db)).violations).toEqual([]);

    // The way back restores what the earlier migrations' own way back needs (their triggers).
    expect((await migrations.migrateTo('006-key-rotation')).error).toBeUndefined();
    expect((await migrations.migrateToLatest()).error).toBeUndefined();
    expect(await rowCounts(db)).toEqual({ holds: 8, journal: 11 + 7 });
    expect((await checkLedger(db)).violations).toEqual([]);
    await expectGuards(db, accountId);
    if (opened.store.dialect === 'sqlite') await expectRebuilt(db);
  });

  it('leaves every read by account, and the review queue, an index to use (SQLite plans)', async () => {
    opened = await openTestStore(dialect);
    if (opened.store.dialect !== 'sqlite') return;
    const { db } = opened.store;
    const plan = (query: { compile(): { sql: string } }) => sqlitePlanOf(db, query);
    const statementQuery = db
      .selectFrom('journal')
      .select('id')
      .where('account_id', '=', sql.lit('acct_1'))
      .where('created_at', '<', sql.lit(5));
    expect(await plan(statementQuery)).toMatch(/USING (COVERING )?INDEX journal_account_created/);
    const reviewQueue = db
      .selectFrom('requests')
      .select('id')
      .where('usage_flag', 'is not', null)
      .where('usage_reviewed_at', 'is', null);
    expect(await plan(reviewQueue)).toMatch(/USING (COVERING )?INDEX requests_usage_flag/);
    const hold = db.selectFrom('holds').select('state').where('id', '=', sql.lit('hold_1'));
    expect(await plan(hold)).toMatch(/USING PRIMARY KEY/);
  });
});
