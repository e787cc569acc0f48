import type { Kysely } from 'kysely';
import { ApiError, notFound } from '../errors/api-error.js';
import type { ConsoleUserTable, Database } from '../store/schema.js';
import { endSessionsOf } from './session-ending.js';

/** What a console user's access may be set to, and who may not lose it (`setDisabled`). */
export interface AccessChange {
  readonly userId: string;
  readonly disabled: boolean;
  /**
   * The operator who asks, from the console: they may not disable themselves there (their own
   * session would end with nobody to undo it from that door).
   */
  readonly actingUserId?: string;
  /** The CLI's `--force`: disabling the last operator who can sign in is allowed. */
  readonly allowLastOperator?: boolean;
}

/**
 * Disables a user or enables them again (docs/console.md, "Taking access away"), in one
 * transaction. Disabling ends every session of the user (each request of every instance reads
 * its session and user rows, so the next one is refused), voids their unused invitation links,
 * and sign-in refuses them from then on. Enabling lifts only the refusal: ended sessions stay
 * ended and voided links stay void (a user who never set a password is invited again).
 *
 * Refused with 403 naming `id`: an operator disabling themselves from the console, and
 * disabling the last operator who can sign in (enabled, password set) unless
 * `allowLastOperator` (the CLI's `--force`: whoever runs it can invite a new operator).
 * `changed` is false when the user already was in that state (nothing written). The row
 * answered is the user as it now is.
 */
export async function setUserDisabled(
  db: Kysely<Database>,
  now: number,
  change: AccessChange,
): Promise<{ user: ConsoleUserTable; changed: boolean }> {
  if (change.disabled && change.actingUserId === change.userId)
    throw new ApiError(
      'PERMISSION_DENIED',
      'you may not disable yourself from the console: another operator (or tollgate users disable) can',
      'id',
    );
  return db.transaction().execute(async (trx) => {
    if (change.disabled)
      // Locks the rows of every operator who can sign in (PostgreSQL; SQLite's write
      // transaction is alone anyway), so two operators disabling each other at once are
      // counted one after the other: one of them stays.
      await trx
        .updateTable('console_users')
        .set((eb) => ({ role: eb.ref('role') }))
        .where('role', '=', 'operator')
        .where('disabled_at', 'is', null)
        .execute();
    const user = await trx
      .selectFrom('console_users')
      .selectAll()
      .where('id', '=', change.userId)
      .executeTakeFirst();
    if (user === undefined) throw notFound('console user');
    if ((user.disabled_at !== null) === change.disabled) return { user, changed: false };
    if (!change.disabled) {
      await trx
        .updateTable('console_users')
        .set({ disabled_at: null })
        .where('id', '=', user.id)
        .execute();
      return { user: { ...user, disabled_at: null }, changed: true };
    }
    // Only an operator who can sign in counts: disabling one who never set a password
    // takes nobody's access away.
    if (
      user.role === 'operator' &&
      user.password_hash !== null &&
      change.allowLastOperator !== true
    ) {
      const others = await trx
        .selectFrom('console_users')
        .select((eb) => eb.fn.countAll<string | number>().as('count'))
        .where('role', '=', 'operator')
        .where('disabled_at', 'is', null)
        .where('password_hash', 'is not', null)
        .where('id', '!=', user.id)
        .executeTakeFirstOrThrow();
      if (Number(others.count) === 0)
        throw new ApiError(
          'PERMISSION_DENIED',
          `${user.email} is the last operator who can sign in: invite another operator first (tollgate users disable --force overrides this)`,
          'id',
        );
    }
    await trx
      .updateTable('console_users')
      .set({ disabled_at: now })
      .where('id', '=', user.id)
      .execute();
    await endSessionsOf(trx, user.id, now);
    await trx
      .updateTable('console_invitations')
      .set({ used_at: now })
      .where('user_id', '=', user.id)
      .where('used_at', 'is', null)
      .execute();
    return { user: { ...user, disabled_at: now }, changed: true };
  });
}
