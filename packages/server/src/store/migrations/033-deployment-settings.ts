import type { Kysely } from 'kysely';

/**
 * Settings that must be one value for the whole deployment, whatever each instance's
 * configuration says: one row per setting, `name` → `value` (text), with when it was last
 * written. The first is `budget_time_zone` (docs/billing.md, "One time zone for the
 * deployment"): two instances counting budget windows in two zones would each treat the other's
 * window start as an older window, and so reopen a spent window. Nothing is seeded here (a
 * migration does not know the configuration): the first instance to start records its own
 * zone (budgets/budget-time-zone.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('deployment_settings')
    .addColumn('name', 'text', (column) => column.primaryKey())
    .addColumn('value', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('deployment_settings').execute();
}
