import type { Kysely } from 'kysely';
import { canonicalEmail } from '../../console/console-email.js';

interface Tables {
  console_users: { id: string; email: string; created_at: number };
}

/**
 * Console emails in their canonical form (console/console-email.ts: NFKC, then lower case),
 * which every look-up compares from now on (docs/console.md, "Emails"). Rows written before
 * were lower-cased only, so a fullwidth `ａｌｉｃｅ@example.com` could stand beside
 * `alice@example.com`; each row is rewritten to its canonical form unless another row already
 * holds it. Such a clash (only a lookalike can clash) keeps the row whose address already was
 * canonical, else the oldest; the others keep their stored address, which no spelling reaches
 * any more (they can no longer sign in: an operator sees them on the users page and may disable
 * them). Down leaves the rows as they are: the canonical form is a valid lower-cased address.
 */
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
