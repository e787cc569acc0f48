import { sql, type Kysely } from 'kysely';

/**
 * Whether a key's business POSTs must carry an `Idempotency-Key` (`required`, the spec's rule and
 * every existing key's) or may leave it to the gateway (`optional`: tools whose headers are static
 * and cannot send a new key per request, such as coding agents; docs/keys.md, "Keys for tools
 * that cannot send an idempotency key"). Set when the key is created, carried by rotation.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('idempotency', 'text', (column) =>
      column
        .notNull()
        .defaultTo('required')
        .check(sql`idempotency in ('required', 'optional')`),
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('idempotency').execute();
}
