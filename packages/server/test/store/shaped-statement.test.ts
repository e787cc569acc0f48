import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { describe, expect, it, vi } from 'vitest';
import { admitAcrossAccounts, admitAll } from '../../src/requests/batched-admission.js';
import { captureAcrossAccounts, captureAll } from '../../src/requests/batched-capture.js';
import { outcomeColumns } from '../../src/requests/outcome-columns.js';
import type { Database } from '../../src/store/schema.js';
import { shapedStatement, type ShapedStatement } from '../../src/store/shaped-statement.js';

// Compiling needs a dialect, never a connection: neither pool is ever asked for one.
const postgres = new Kysely<Database>({ dialect: new PostgresDialect({ pool: {} as never }) });
const sqlite = new Kysely<Database>({ dialect: new SqliteDialect({ database: {} as never }) });

/** What the statement's own builder compiles to with the real values, compared field by field. */
function expectSameAsItsBuilder<Values extends object>(
  statement: ShapedStatement<Values>,
  db: Kysely<Database>,
  values: Values,
): void {
  const direct = statement.build(db, values).compile(db);
  const shaped = statement(db, values);
  expect(shaped.sql).toBe(direct.sql);
  expect(shaped.parameters).toEqual(direct.parameters);
}

const insertAccounts = shapedStatement(
  (
    db,
    batch: { createdAt: number; rows: readonly { id: string; email: string; balance?: number }[] },
  ) =>
    sql`${db.insertInto('accounts').values(
      // `balance` may be left out here (the column's default), which the types do not know.
      batch.rows.map((row) => ({
        ...row,
        held: 0,
        created_at: batch.createdAt,
        budget_window_start: 0,
        budget_spent: 0,
        owed: 0,
      })) as never,
    )}`,
);

describe('statements compiled once per shape', () => {
  it('fills a shape’s one compiled text with each call’s own values', () => {
    for (const db of [postgres, sqlite]) {
      expectSameAsItsBuilder(insertAccounts, db, {
        createdAt: 5,
        rows: [{ id: 'a1', email: 'one@example.test', balance: 7 }],
      });
      expectSameAsItsBuilder(insertAccounts, db, {
        createdAt: 6,
        rows: [{ id: 'a2', email: 'two@example.test', balance: 0 }],
      });
    }
  });

  it('builds again for another number of rows or another set of keys, never reuses a wrong text', () => {
    const build = vi.fn(insertAccounts.build);
    const statement = shapedStatement(build);
    const one = { createdAt: 1, rows: [{ id: 'a', email: 'a@example.test', balance: 1 }] };
    statement(postgres, one);
    statement(postgres, { ...one, createdAt: 2 });
    expect(build).toHaveBeenCalledTimes(1);
    const cases = [
      { createdAt: 3, rows: [...one.rows, { id: 'b', email: 'b@example.test', balance: 2 }] },
      // A key left out (or `undefined`) is a column not given, as Kysely's insert has it.
      { createdAt: 4, rows: [{ id: 'c', email: 'c@example.test' }] },
      { createdAt: 4, rows: [{ id: 'd', email: 'd@example.test', balance: undefined }] },
      {
        createdAt: 5,
        rows: [
          { id: 'e', email: 'e@example.test' },
          { id: 'f', email: 'f@example.test', balance: 3 },
        ],
      },
    ];
    for (const values of cases) {
      const shaped = statement(postgres, values);
      const direct = insertAccounts.build(postgres, values).compile(postgres);
      expect(shaped.sql).toBe(direct.sql);
      expect(shaped.parameters).toEqual(direct.parameters);
    }
    // The three new shapes built once each (the `undefined` key is the same shape as left out).
    expect(build).toHaveBeenCalledTimes(4);
  });

  it('tells apart shapes that differ only in where their values sit', () => {
    const nested = shapedStatement(
      (_db, values: { groups: readonly (readonly string[])[]; named: Record<string, string> }) =>
        sql`select ${sql.join(
          values.groups.map((group) => sql`array[${sql.join(group)}]`),
        )}, ${sql.join(Object.entries(values.named).map(([name, value]) => sql`${value} as ${sql.ref(name)}`))}`,
    );
    const cases = [
      { groups: [['a'], ['b', 'c']], named: { x: '1', y: '2' } },
      { groups: [['a', 'b'], ['c']], named: { x: '1', y: '2' } },
      { groups: [['a', 'b', 'c']], named: { x: '1', y: '2' } },
      { groups: [['a'], ['b', 'c']], named: { y: '2', x: '1' } },
      { groups: [['a'], ['b', 'c']], named: { x: '1' } },
      { groups: [['a'], ['b', 'c']], named: { xy: '1' } },
      { groups: [[], ['a', 'b', 'c']], named: {} },
    ];
    // Twice round: the second time every shape comes from the cache.
    for (const values of [...cases, ...cases]) expectSameAsItsBuilder(nested, postgres, values);
  });

  it('still compiles every shape right once it has seen more shapes than it keeps apart', () => {
    const build = vi.fn(insertAccounts.build);
    const statement = shapedStatement(build, 8);
    const rows = (count: number) =>
      Array.from({ length: count }, (_, index) => ({
        id: `a${index}`,
        email: `${index}@example.test`,
      }));
    for (const count of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 10]) {
      const values = { createdAt: count, rows: rows(count) };
      const shaped = statement(postgres, values);
      const direct = insertAccounts.build(postgres, values).compile(postgres);
      expect(shaped.sql).toBe(direct.sql);
      expect(shaped.parameters).toEqual(direct.parameters);
    }
    // The shapes past the limit are compiled on every call (the repeated 10 twice), the early
    // ones from the cache (the repeated 1 once).
    expect(build.mock.calls.length).toBeGreaterThan(10);
    expect(build.mock.calls.filter(([, values]) => values.rows.length === 1)).toHaveLength(1);
  });

  it('keeps a database’s text apart from another dialect’s', () => {
    const values = { createdAt: 1, rows: [{ id: 'a', email: 'a@example.test', balance: 1 }] };
    expect(insertAccounts(postgres, values).sql).toContain('$1');
    expect(insertAccounts(sqlite, values).sql).not.toContain('$1');
  });

  it('refuses a value that is not plain rather than freezing it into the text', () => {
    const values = { createdAt: 1, rows: [{ id: 'a', email: new Date(0) as unknown as string }] };
    expect(() => insertAccounts(postgres, values)).toThrow(/plain/);
  });
});

describe('the batched money statements, compiled once per batch shape', () => {
  const windows = { daily: 1_000, weekly: 2_000, monthly: 3_000 };
  const record = (index: number) =>
    ({
      id: `req_${index}`,
      key_id: 'key_1',
      account_id: 'acc_1',
      idempotency_key: `idem-${index}`,
      fingerprint: `fp${index}`,
      method: 'POST',
      path: '/v1/chat/completions',
      model: 'gpt-4o-mini',
      status: 'processing',
      http_status: null,
      response_body: null,
      created_at: 10 + index,
      updated_at: 10 + index,
      hold_id: `hold_${index}`,
      reserve_amount: 100 * (index + 1),
      price_version: 'v1',
    }) as unknown as Parameters<typeof admitAll>[1]['records'][number];

  const admission = (size: number) => {
    const records = Array.from({ length: size }, (_, index) => record(index + size * 10));
    return {
      records,
      holds: records.map((row, index) => ({
        id: `hold_${size}_${index}`,
        account_id: `acc_${index % 2}`,
        request_id: `req_${size}_${index}`,
        amount: 100 + index,
        state: 'open' as const,
        captured_amount: null,
        price_version: 'v1',
        created_at: size,
        resolved_at: null,
        budget_key_id: null,
      })),
      journal: records.map((row, index) => ({
        id: `jrn_${size}_${index}`,
        account_id: `acc_${index % 2}`,
        kind: 'hold' as const,
        balance_delta: 0,
        held_delta: 100 + index,
        owed_delta: 0,
        hold_id: `hold_${size}_${index}`,
        request_id: `req_${size}_${index}`,
        topup_id: null,
        reason: `reserve for req_${size}_${index}`,
        created_at: size,
      })),
    };
  };
  const captures = (size: number) =>
    Array.from({ length: size }, (_, index) => ({
      accountId: `acc_${index % 3}`,
      holdId: `hold_${size}_${index}`,
      amount: 10 * index + size,
      entryId: `jrn_${size}_${index}`,
      reason: `capture ${size}/${index}`,
      outcome: outcomeColumns.map((column, at) =>
        column === 'id'
          ? `req_${size}_${index}`
          : at % 3 === 0
            ? null
            : `${column} ${size} ${index}`,
      ),
    }));

  it('admits a batch exactly as its builder would, at every size and with every value its own', () => {
    for (const size of [1, 2, 3, 1, 2, 5]) {
      const { records, holds, journal } = admission(size);
      expectSameAsItsBuilder(admitAll, postgres, {
        accountId: `acc_${size}`,
        total: records.length * 17,
        windows: { ...windows, daily: size },
        records,
        holds,
        journal,
      });
      expectSameAsItsBuilder(admitAcrossAccounts, postgres, {
        windows: { ...windows, monthly: size },
        records,
        holds,
        journal,
        sums: [
          { id: `acc_a${size}`, amount: size },
          { id: `acc_b${size}`, amount: 2 * size },
        ].slice(0, 1 + (size % 2)),
      });
      // With a keys' part (some claim has a key budget), one key or two.
      const keySums = [
        { id: `key_a${size}`, amount: 3 * size },
        { id: `key_b${size}`, amount: 4 * size },
      ].slice(0, 1 + (size % 2));
      expectSameAsItsBuilder(admitAll, postgres, {
        accountId: `acc_${size}`,
        total: records.length * 19,
        windows: { ...windows, weekly: size },
        records,
        holds,
        journal,
        keySums,
      });
      expectSameAsItsBuilder(admitAcrossAccounts, postgres, {
        windows: { ...windows, daily: size },
        records,
        holds,
        journal,
        sums: [{ id: `acc_c${size}`, amount: 5 * size }],
        keySums,
      });
    }
  });

  it('captures a batch exactly as its builder would, at every size and with every value its own', () => {
    for (const size of [1, 2, 3, 1, 2, 4]) {
      expectSameAsItsBuilder(captureAll, postgres, {
        accountId: `acc_${size}`,
        now: 1_000 + size,
        windows: { ...windows, weekly: size },
        captures: captures(size),
      });
      expectSameAsItsBuilder(captureAcrossAccounts, postgres, {
        accountIds: ['acc_0', 'acc_1', 'acc_2'].slice(0, Math.min(size, 3)),
        now: 2_000 + size,
        windows: { ...windows, daily: size },
        captures: captures(size),
      });
      // With a keys' part (some hold has a key budget), alternating with the shapes without.
      expectSameAsItsBuilder(captureAll, postgres, {
        accountId: `acc_${size}`,
        now: 3_000 + size,
        windows: { ...windows, monthly: size },
        captures: captures(size),
        withKeyBudgets: true,
      });
      expectSameAsItsBuilder(captureAcrossAccounts, postgres, {
        accountIds: ['acc_0', 'acc_1', 'acc_2'].slice(0, Math.min(size, 3)),
        now: 4_000 + size,
        windows: { ...windows, weekly: size },
        captures: captures(size),
        withKeyBudgets: true,
      });
    }
  });
});
