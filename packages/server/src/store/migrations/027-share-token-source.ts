import type { Kysely } from 'kysely';

/**
 * Which secret derived a share's public token (docs/shares.md, "The token";
 * docs/decisions/0016-console-share-links.md): `api_key`, the plaintext key that asked for it (every
 * share before this migration), or `console`, the gateway's share-link secret, for a share asked
 * for from the console, where no key is at hand. The token itself is still never stored.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('shares')
    .addColumn('token_source', 'text', (column) => column.notNull().defaultTo('api_key'))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('shares').dropColumn('token_source').execute();
}
