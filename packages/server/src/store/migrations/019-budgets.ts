import type { Kysely } from 'kysely';

/**
 * Budgets and IP allowlists (docs/billing.md "Budgets", docs/security.md "IP allowlists").
 *
 * A budget is four columns on the row it limits (an account or a key), so the hold's own guarded
 * update checks it: `budget_limit` and `budget_window` (both null: no budget), `budget_spent`
 * (captured in the window that starts at `budget_window_start`; a statement that finds an older
 * start counts it as 0 and moves the start). An account's open holds are its `held`; a key keeps
 * `budget_held`, the open holds reserved against its budget, and such a hold names the key in
 * `holds.budget_key_id`, so its resolution gives back exactly what it took.
 * `api_keys.allowed_ips` is a JSON array of CIDR blocks, or null for everywhere.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['accounts', 'api_keys']) {
    await db.schema.alterTable(table).addColumn('budget_limit', 'bigint').execute();
    await db.schema.alterTable(table).addColumn('budget_window', 'text').execute();
    await db.schema
      .alterTable(table)
      .addColumn('budget_window_start', 'bigint', (column) => column.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable(table)
      .addColumn('budget_spent', 'bigint', (column) => column.notNull().defaultTo(0))
      .execute();
  }
  await db.schema
    .alterTable('api_keys')
    .addColumn('budget_held', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('api_keys').addColumn('allowed_ips', 'text').execute();
  await db.schema.alterTable('holds').addColumn('budget_key_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('holds').dropColumn('budget_key_id').execute();
  await db.schema.alterTable('api_keys').dropColumn('allowed_ips').execute();
  await db.schema.alterTable('api_keys').dropColumn('budget_held').execute();
  for (const table of ['api_keys', 'accounts'])
    for (const column of ['budget_spent', 'budget_window_start', 'budget_window', 'budget_limit'])
      await db.schema.alterTable(table).dropColumn(column).execute();
}
