import type { ConsoleUser } from '@tollgate/protocol';
import { Secret, TOTP } from 'otpauth';
import type { Kysely } from 'kysely';
import { ApiError, invalidInput, notFound } from '../errors/api-error.js';
import type { ConsoleUserTable, Database } from '../store/schema.js';
import type { Clock } from '../util/effects.js';
import { canonicalEmail } from './console-email.js';
import type { ConsoleIdentity } from './console-identity.js';
import { consoleUserView } from './console-users.js';
import type { LoginThrottle } from './login-throttle.js';
import { passwordMatches } from './passwords.js';
import { endSessionsOf } from './session-ending.js';

/** RFC 6238 as every authenticator app reads it: SHA-1, 6 digits, 30-second steps. */
const PERIOD_SECONDS = 30;
/** A code of the step before or after is accepted too (clocks drift). */
const WINDOW_STEPS = 1;
const CODE = /^[0-9]{6}$/;

function totpOf(user: Pick<ConsoleUserTable, 'email' | 'totp_secret'>): TOTP {
  return new TOTP({
    issuer: 'Tollgate',
    label: user.email,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(user.totp_secret ?? ''),
  });
}

/**
 * The console's optional TOTP second factor (docs/console.md, "Second factor"), through
 * `otpauth` (docs/decisions/0012-totp.md). Setup stores a new secret and shows it once (as an
 * `otpauth://` URI for the app); the first correct code turns it on and marks the session as
 * having proved it. A code is accepted once: the step it belongs to is claimed by a guarded
 * update, so a code seen over a shoulder cannot be replayed within its 90 seconds.
 */
export class ConsoleTotp {
  /**
   * `throttle`: failed proofs of a removal count like failed sign-ins (a stolen session cannot
   * guess its way to removing the factor). `operatorsKeepIt`:
   * `server.console_require_operator_totp` (an operator may not remove the factor it needs).
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly throttle: LoginThrottle,
    private readonly operatorsKeepIt: boolean,
  ) {}

  /** A new secret for a user without a second factor in force (409 once one is). */
  async setup(identity: ConsoleIdentity): Promise<{ secret: string; otpauth_url: string }> {
    const { user } = identity;
    if (user.totp_enabled_at !== null)
      throw new ApiError('IDEMPOTENCY_CONFLICT', 'a second factor is already set up', 'totp');
    const secret = new Secret({ size: 20 }).base32;
    await this.db
      .updateTable('console_users')
      .set({ totp_secret: secret, totp_last_step: null })
      .where('id', '=', user.id)
      .where('totp_enabled_at', 'is', null)
      .execute();
    return { secret, otpauth_url: totpOf({ email: user.email, totp_secret: secret }).toString() };
  }

  /** Turns the pending secret on with its first code; this session counts as verified. */
  async enable(identity: ConsoleIdentity, input: { code?: unknown }): Promise<void> {
    const user = await this.reload(identity.user.id);
    if (user.totp_enabled_at !== null)
      throw new ApiError('IDEMPOTENCY_CONFLICT', 'a second factor is already set up', 'totp');
    if (user.totp_secret === null)
      throw invalidInput('code', 'start with POST /console/api/totp (no secret to confirm)');
    if (!(await this.claim(user, input.code)))
      throw new ApiError('PERMISSION_DENIED', 'wrong or already used code', 'code');
    const now = this.clock.now();
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('console_users')
        .set({ totp_enabled_at: now })
        .where('id', '=', user.id)
        .execute();
      await trx
        .updateTable('console_sessions')
        .set({ totp_verified_at: now })
        .where('id', '=', identity.session.id)
        .execute();
    });
  }

  /**
   * Removes the factor in force, proved with a current code (`code`) or the password
   * (`password`): a lost phone is recovered with the password in a session that is still open
   * (docs/console.md, "Removing the factor"). A wrong proof is 403 naming the field and counts
   * towards the sign-in throttle of the request's client address (`address`) and the email.
   */
  async disable(
    identity: ConsoleIdentity,
    input: { code?: unknown; password?: unknown },
    address: string,
  ): Promise<void> {
    const user = await this.reload(identity.user.id);
    if (user.totp_enabled_at === null)
      throw invalidInput('totp', 'this user has no second factor to remove');
    if (user.role === 'operator' && this.operatorsKeepIt)
      throw new ApiError(
        'PERMISSION_DENIED',
        'operators must keep a second factor on this gateway (server.console_require_operator_totp)',
        'totp',
      );
    const field = input.code !== undefined ? 'code' : 'password';
    if (field === 'password' && typeof input.password !== 'string')
      throw invalidInput('code', 'send the current code (code) or your password (password)');
    await this.throttle.refuseIfBlocked(address, user.email);
    const proved =
      field === 'code'
        ? await this.claim(user, input.code)
        : await passwordMatches(String(input.password), user.password_hash);
    if (!proved) {
      await this.throttle.recordFailure(address, user.email);
      throw new ApiError(
        'PERMISSION_DENIED',
        field === 'code' ? 'wrong or already used code' : 'wrong password',
        field,
      );
    }
    await this.db
      .updateTable('console_users')
      .set({ totp_secret: null, totp_enabled_at: null, totp_last_step: null })
      .where('id', '=', user.id)
      .where('totp_enabled_at', 'is not', null)
      .execute();
  }

  /**
   * The operator's recovery path (`tollgate users reset-totp EMAIL`; docs/console.md, "Removing
   * the factor, and recovery"): clears the factor of a user who lost it and ends every session
   * of that user, in one transaction. 404 for an unknown email.
   */
  async reset(email: string): Promise<ConsoleUser> {
    const now = this.clock.now();
    return this.db.transaction().execute(async (trx) => {
      const user = await trx
        .selectFrom('console_users')
        .selectAll()
        .where('email', '=', canonicalEmail(email))
        .executeTakeFirst();
      if (user === undefined) throw notFound('console user');
      await trx
        .updateTable('console_users')
        .set({ totp_secret: null, totp_enabled_at: null, totp_last_step: null })
        .where('id', '=', user.id)
        .execute();
      await endSessionsOf(trx, user.id, now);
      return consoleUserView({ ...user, totp_secret: null, totp_enabled_at: null });
    });
  }

  /**
   * Whether `code` is the user's current code, not used before; accepting it claims its step.
   * Anything but six digits is simply wrong (the sign-in answers the same 401 for it).
   */
  async claim(user: ConsoleUserTable, code: unknown): Promise<boolean> {
    if (typeof code !== 'string' || !CODE.test(code) || user.totp_secret === null) return false;
    const now = this.clock.now();
    const delta = totpOf(user).validate({ token: code, timestamp: now, window: WINDOW_STEPS });
    if (delta === null) return false;
    const step = Math.floor(now / 1000 / PERIOD_SECONDS) + delta;
    const claimed = await this.db
      .updateTable('console_users')
      .set({ totp_last_step: step })
      .where('id', '=', user.id)
      .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
      .executeTakeFirst();
    return claimed.numUpdatedRows === 1n;
  }

  private async reload(userId: string): Promise<ConsoleUserTable> {
    return this.db
      .selectFrom('console_users')
      .selectAll()
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
  }
}
