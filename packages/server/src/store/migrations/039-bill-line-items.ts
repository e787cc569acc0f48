import type { Kysely } from 'kysely';

/**
 * The line items of a request's bill (docs/billing.md, "Line items"): JSON, the items whose
 * amounts sum to `amount`, each with its units and price, so the bill can be recomputed from the
 * record alone. Null for a bill without line items, and for every record priced before this
 * migration (shown as `bill.line_items: null`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('requests').addColumn('line_items', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('requests').dropColumn('line_items').execute();
}
