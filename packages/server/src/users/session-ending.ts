import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.js';

/**
 * Ends every open session of a console user, but `keep` (the session that asked, on a password
 * change). Sessions are read from the database on every request, so this ends them at once on
 * every instance. One rule for a password change, a TOTP reset and a disabled user.
 */
export async function endSessionsOf(
  db: Kysely<Database> | Transaction<Database>,
  userId: string,
  now: number,
  keep?: string,
): Promise<void> {
  let update = db
    .updateTable('console_sessions')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null);
  if (keep !== undefined) update = update.where('id', '!=', keep);
  await update.execute();
}
