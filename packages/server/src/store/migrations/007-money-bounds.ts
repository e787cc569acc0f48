import { MAX_BALANCE_MICRO_YUAN, MAX_MOVEMENT_MICRO_YUAN } from '@tollgate/protocol';
import { PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';

/**
 * Money bounds in the database (docs/billing.md, "Bounds"): no balance or hold above
 * MAX_BALANCE_MICRO_YUAN, no credit above MAX_MOVEMENT_MICRO_YUAN. The services refuse such
 * movements first with a 400 naming the field; these rules are the backstop for every other
 * writer (a bug, a script, an older instance during a rolling upgrade).
 *
 * Each rule is written once, as the predicate of a violating row: PostgreSQL gets
 * `CHECK (NOT (violation))`; SQLite, which cannot add a constraint to an existing table without
 * rebuilding it (and `accounts` is referenced by five tables' foreign keys, which a rebuild inside
 * the migration transaction cannot switch off), gets BEFORE INSERT / BEFORE UPDATE triggers that
 * abort the statement. NULL never violates, as in a CHECK. Existing rows are counted first: any
 * violation stops the migration with the table named, before anything is changed.
 */
const maxBalance = sql.lit(MAX_BALANCE_MICRO_YUAN);
const maxMovement = sql.lit(MAX_MOVEMENT_MICRO_YUAN);

interface Bound {
  /** The constraint's (PostgreSQL) or the triggers' name prefix (SQLite). */
  readonly name: string;
  readonly table: string;
  /** The columns an UPDATE must touch for the rule to be re-checked (SQLite triggers). */
  readonly columns: readonly string[];
  /** True for a row that breaks the rule; written over bare column names. */
  readonly violation: (row: (column: string) => RawBuilder<unknown>) => RawBuilder<unknown>;
}

const bounds: readonly Bound[] = [
  {
    name: 'accounts_money_bounds',
    table: 'accounts',
    columns: ['balance', 'held'],
    violation: (row) => sql`${row('balance')} > ${maxBalance} or ${row('held')} > ${maxBalance}`,
  },
  {
    name: 'topups_amount_bounds',
    table: 'topups',
    columns: ['amount'],
    violation: (row) => sql`${row('amount')} > ${maxMovement}`,
  },
  {
    name: 'redemption_codes_amount_bounds',
    table: 'redemption_codes',
    columns: ['amount'],
    violation: (row) => sql`${row('amount')} <= 0 or ${row('amount')} > ${maxMovement}`,
  },
  {
    name: 'holds_amount_bounds',
    table: 'holds',
    columns: ['amount', 'captured_amount'],
    violation: (row) =>
      sql`${row('amount')} > ${maxBalance} or ${row('captured_amount')} < 0 or ${row('captured_amount')} > ${maxBalance}`,
  },
  {
    name: 'journal_delta_bounds',
    table: 'journal',
    columns: ['kind', 'balance_delta', 'held_delta'],
    violation: (row) =>
      sql`${row('balance_delta')} < -${maxBalance} or ${row('balance_delta')} > ${maxBalance}
        or ${row('held_delta')} < -${maxBalance} or ${row('held_delta')} > ${maxBalance}
        or (${row('kind')} in ('topup', 'redemption') and ${row('balance_delta')} > ${maxMovement})`,
  },
];

const bare = (column: string) => sql.ref(column);
const newRow = (column: string) => sql.ref(`new.${column}`);

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const bound of bounds) {
    const found = await sql<{ count: number | string }>`select count(*) as count from ${sql.table(
      bound.table,
    )} where ${bound.violation(bare)}`.execute(db);
    const count = Number(found.rows[0]?.count ?? 0);
    if (count > 0)
      throw new Error(
        `${count} row(s) of ${bound.table} break ${bound.name} (docs/billing.md, "Bounds"); correct them, then start again`,
      );
  }
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const bound of bounds) {
    if (postgres) {
      await sql`alter table ${sql.table(bound.table)} add constraint ${sql.ref(bound.name)}
        check (not (${bound.violation(bare)}))`.execute(db);
      continue;
    }
    const abort = sql`begin select raise(abort, ${sql.lit(bound.name)}); end`;
    await sql`create trigger ${sql.ref(`${bound.name}_insert`)} before insert on ${sql.table(
      bound.table,
    )} when ${bound.violation(newRow)} ${abort}`.execute(db);
    await sql`create trigger ${sql.ref(`${bound.name}_update`)} before update of ${sql.join(
      bound.columns.map((column) => sql.ref(column)),
    )} on ${sql.table(bound.table)} when ${bound.violation(newRow)} ${abort}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const bound of bounds) {
    if (postgres) {
      await sql`alter table ${sql.table(bound.table)} drop constraint ${sql.ref(bound.name)}`.execute(
        db,
      );
      continue;
    }
    await sql`drop trigger ${sql.ref(`${bound.name}_insert`)}`.execute(db);
    await sql`drop trigger ${sql.ref(`${bound.name}_update`)}`.execute(db);
  }
}
