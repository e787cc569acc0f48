import { PostgresAdapter, sql, type Kysely } from 'kysely';

/**
 * Fewer B-trees written by every accounted request (issue 19; bench/RESULTS.md, "Fewer B-trees
 * per request"). Each request inserts a hold and two journal entries and moves the hold from
 * `open`; every index on those rows is written each time, so only the indexes a query reads stay:
 *
 * - `journal_account` (account_id) is a prefix of `journal_account_created` (account_id,
 *   created_at), which serves every read by account.
 * - `journal_hold` (hold_id) and `holds_account_state` (account_id, state): no query looks
 *   entries up by hold, nor holds by account or state (joins go from the journal to the hold by
 *   the hold's primary key; the ledger check reads both tables whole).
 * - `requests_usage_flag` only serves the review queue (`usage_flag is not null`): partial, so
 *   the records without a flag (all but a few) are not in it.
 *
 * SQLite only: `holds` and `journal` become WITHOUT ROWID tables. Their TEXT primary key was a
 * B-tree of its own beside the rowid table; now the rows are stored in the primary key's order
 * (ids are time-ordered: appends at the end), and their rows are small, as such tables want. A
 * table cannot change that in place, so each is rebuilt in a transaction of its own (Kysely runs
 * SQLite's migrations without one; nothing references these tables, so the foreign keys, which
 * stay on, allow it), its indexes created again from their stored definitions. A table already
 * rebuilt is left alone and the indexes are dropped only if they exist, so a migration stopped
 * half-way (a crash) completes when started again. The rebuild also turns their money bounds (migration
 * 007: triggers, because SQLite could not add a constraint without a rebuild) into CHECK
 * constraints, as PostgreSQL has them: the same rule, its text taken from the trigger, checked
 * on every insert and update, at a fraction of a trigger's cost (a sub-program per row).
 * PostgreSQL has no rowid and has the constraints already: only the indexes change there.
 */
const REBUILT_TABLES = ['holds', 'journal'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('journal_account').ifExists().execute();
  await db.schema.dropIndex('journal_hold').ifExists().execute();
  await db.schema.dropIndex('holds_account_state').ifExists().execute();
  await db.schema.dropIndex('requests_usage_flag').ifExists().execute();
  await db.schema
    .createIndex('requests_usage_flag')
    .on('requests')
    .columns(['usage_flag', 'usage_reviewed_at'])
    .where(sql.ref('usage_flag'), 'is not', null)
    .execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  for (const table of REBUILT_TABLES) await rebuild(db, table, 'without rowid');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter))
    for (const table of REBUILT_TABLES) await rebuild(db, table, 'rowid');
  await db.schema.dropIndex('requests_usage_flag').execute();
  await db.schema
    .createIndex('requests_usage_flag')
    .on('requests')
    .columns(['usage_flag', 'usage_reviewed_at'])
    .execute();
  await db.schema
    .createIndex('holds_account_state')
    .on('holds')
    .columns(['account_id', 'state'])
    .execute();
  await db.schema.createIndex('journal_hold').on('journal').column('hold_id').execute();
  await db.schema.createIndex('journal_account').on('journal').column('account_id').execute();
}

/** A money-bounds trigger of migration 007: its name, event and the violation it aborts on. */
const BOUNDS_TRIGGER =
  /^CREATE TRIGGER "(\w+)_(insert|update)" before (?:insert|update(?: of [^]+?)?) on "\w+" when ([^]+) begin select raise\(abort, '\1'\); end$/;
/** The same bound as this migration writes it: the table's last constraint. */
const BOUNDS_CHECK = /, constraint "(\w+_bounds)" check \(not \(([^]+)\)\)$/;
const WITHOUT_ROWID = ' WITHOUT ROWID';

/**
 * Rebuilds SQLite table `table` as a WITHOUT ROWID table whose money bounds are CHECK
 * constraints, or back (`down`) as a rowid table whose bounds are triggers again (an update
 * trigger that runs on any update: migration 007's named the columns, the rule is the same).
 */
async function rebuild(
  db: Kysely<unknown>,
  table: string,
  to: 'without rowid' | 'rowid',
): Promise<void> {
  const definitions = await sql<{ type: string; sql: string | null }>`
    select type, sql from sqlite_master where tbl_name = ${table}`.execute(db);
  const create = definitions.rows.find((row) => row.type === 'table')?.sql;
  const prefix = `CREATE TABLE "${table}" (`;
  const suffix = to === 'rowid' ? `)${WITHOUT_ROWID}` : ')';
  if (to === 'without rowid' && create?.endsWith(`)${WITHOUT_ROWID}`) === true) return;
  if (
    create === undefined ||
    create === null ||
    !create.startsWith(prefix) ||
    !create.endsWith(suffix)
  )
    throw new Error(`unexpected definition of ${table}: ${String(create)}`);
  let body = create.slice(prefix.length, -suffix.length);
  const constraints: string[] = [];
  const kept: string[] = [];
  for (const row of definitions.rows) {
    if (row.type === 'table' || row.sql === null) continue; // automatic indexes come with the table
    const [, name, event, violation] = BOUNDS_TRIGGER.exec(row.sql) ?? [];
    if (name === undefined || violation === undefined) kept.push(row.sql);
    // Its insert and update triggers test the same violation (migration 007).
    else if (event === 'insert')
      constraints.push(`constraint "${name}" check (not (${violation.replaceAll('"new".', '')}))`);
  }
  const [check, name, violation] = BOUNDS_CHECK.exec(body) ?? [];
  if (to === 'rowid' && check !== undefined && name !== undefined && violation !== undefined) {
    body = body.slice(0, -check.length);
    const when = violation.replace(/"(\w+)"/g, '"new"."$1"');
    const abort = `begin select raise(abort, '${name}'); end`;
    kept.push(`CREATE TRIGGER "${name}_insert" before insert on "${table}" when ${when} ${abort}`);
    kept.push(`CREATE TRIGGER "${name}_update" before update on "${table}" when ${when} ${abort}`);
  }
  const rebuilt = `${table}_rebuilt`;
  const statements = [
    `CREATE TABLE "${rebuilt}" (${[body, ...constraints].join(', ')})${to === 'rowid' ? '' : WITHOUT_ROWID}`,
    `INSERT INTO "${rebuilt}" SELECT * FROM "${table}"`,
    `DROP TABLE "${table}"`,
    `ALTER TABLE "${rebuilt}" RENAME TO "${table}"`,
    ...kept,
  ];
  // All or nothing: a savepoint outside any transaction begins one, its release commits it.
  await sql.raw(`SAVEPOINT rebuild_${table}`).execute(db);
  try {
    for (const statement of statements) await sql.raw(statement).execute(db);
  } catch (error) {
    await sql.raw(`ROLLBACK TO rebuild_${table}`).execute(db);
    await sql.raw(`RELEASE rebuild_${table}`).execute(db);
    throw error;
  }
  await sql.raw(`RELEASE rebuild_${table}`).execute(db);
}
