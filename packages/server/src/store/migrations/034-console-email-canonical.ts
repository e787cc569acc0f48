import type { Kysely } from 'kysely';

interface Tables {
  console_users: { id: string; email: string; created_at: number };
}

/**
 * Console emails in their canonical form (users/console-email.ts: NFKC, then lower case),
 * which every look-up compares from now on (docs/console.md, "Emails"). Rows written before
 * were lower-cased only, so a fullwidth `ａｌｉｃｅ@example.com` could stand beside
 * `alice@example.com`; each row is rewritten to its canonical form unless another row already
 * holds it. Such a clash (only a lookalike can clash) keeps the row whose address already was
 * canonical, else the oldest; the others keep their stored address, which no spelling reaches
 * any more (they can no longer sign in: an operator sees them on the users page and may disable
 * them). Down leaves the rows as they are: the canonical form is a valid lower-cased address.
 */
/**
 * The canonical form as users/console-email.ts `canonicalEmail` defined it when this migration
 * was written. A migration does on every database what it did on the first: it keeps its own copy
 * of the rule rather than import one that may change (and a store below every service imports
 * none of them).
 */
function canonicalEmail(value: string): string {
  return value.normalize('NFKC').toLowerCase().normalize('NFKC');
}

export async function up(untyped: Kysely<unknown>): Promise<void> {
  const db = untyped as unknown as Kysely<Tables>;
  const rows = await db
    .selectFrom('console_users')
    .select(['id', 'email'])
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  const taken = new Set(
    rows.filter((row) => canonicalEmail(row.email) === row.email).map((row) => row.email),
  );
  for (const row of rows) {
    const canonical = canonicalEmail(row.email);
    if (canonical === row.email || taken.has(canonical)) continue;
    taken.add(canonical);
    await db
      .updateTable('console_users')
      .set({ email: canonical })
      .where('id', '=', row.id)
      .execute();
  }
}

export async function down(): Promise<void> {
  // Nothing to undo: see above.
}
