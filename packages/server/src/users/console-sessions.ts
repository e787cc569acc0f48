import type { ConsoleSession } from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { ApiError, invalidInput, notFound } from '../errors/api-error.js';
import { parseInput, requiredAs, type Unparsed } from '../errors/input-schema.js';
import type { ConsoleSessionTable, ConsoleUserTable, Database } from '../store/schema.js';
import type { ConsoleIdentity } from './console-identity.js';
import type { Clock, IdGenerator } from '../util/effects.js';
import { canonicalEmail } from './console-email.js';
import { CONSOLE_TOKEN, hashConsoleToken, newConsoleToken } from './console-tokens.js';
import type { ConsoleUsers } from './console-users.js';
import type { LoginThrottle } from './login-throttle.js';
import type { ConsoleTotp } from './totp.js';
import { hashPassword, newPassword, passwordMatches } from './passwords.js';
import { endSessionsOf } from './session-ending.js';

/** A session ends this long after sign-in, however active. */
export const SESSION_LIFETIME_MS = 7 * 24 * 3_600_000;
/** ...and this long after its last use. */
export const SESSION_IDLE_MS = 12 * 3_600_000;
/** `last_seen_at` is written at most this often per session. */
const SEEN_WRITE_INTERVAL_MS = 60_000;

/** Who is signed in (console-identity.ts, below this file and totp.ts). */
export type { ConsoleIdentity } from './console-identity.js';

const NOT_AN_EMAIL = 'must be an email address';
const NOT_A_STRING = 'must be a string';

/**
 * A sign-in: the email as typed (compared in its canonical form: console-email.ts) and the
 * password, each bounded so that nothing long is hashed or looked up; `totp`, the code of the
 * second factor, is judged against the user's secret (`ConsoleTotp.claim`), the same 401 for
 * any wrong value.
 */
const signInInput = z.object({
  email: requiredAs(
    NOT_AN_EMAIL,
    z
      .string({ error: NOT_AN_EMAIL })
      .min(3, { error: NOT_AN_EMAIL })
      .max(320, { error: NOT_AN_EMAIL }),
  ),
  password: requiredAs(
    NOT_A_STRING,
    z.string({ error: NOT_A_STRING }).max(1_000, { error: NOT_A_STRING }),
  ),
  totp: z.unknown().optional(),
});

/** A password change: the current password (checked against the stored hash) and the new one. */
const passwordChangeInput = z.object({
  current_password: requiredAs(NOT_A_STRING, z.string({ error: NOT_A_STRING })),
  new_password: newPassword,
});

/** Where a sign-in comes from. */
export interface ClientOrigin {
  readonly address: string;
  readonly userAgent: string;
}

/**
 * Server-side console sessions (docs/console.md): the cookie carries a random token, the store
 * its SHA-256. Signing out, revoking, a password change and disabling the user end sessions at
 * once, on every instance: each request reads its session row and its user's row, with no cache
 * between them and the database (so no change feed is needed to end one).
 */
export class ConsoleSessions {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly effects: { clock: Clock; ids: IdGenerator },
    private readonly users: ConsoleUsers,
    private readonly throttle: LoginThrottle,
    private readonly totp: ConsoleTotp,
  ) {}

  /**
   * Signs in: the same 401 for an unknown email, a wrong password, a user without a password
   * yet or a disabled one. Failures count towards the throttle (429 past it).
   */
  async signIn(
    input: Unparsed<typeof signInInput>,
    origin: ClientOrigin,
  ): Promise<{ token: string; identity: ConsoleIdentity }> {
    const { email: given, password, totp } = parseInput(signInInput, input);
    // Every spelling of one address is one user and one throttle count (console-email.ts).
    const email = canonicalEmail(given);
    await this.throttle.refuseIfBlocked(origin.address, email);
    const user = await this.users.byEmail(email);
    const matches = await passwordMatches(password, user?.password_hash ?? null);
    if (user === undefined || !matches || user.disabled_at !== null) {
      await this.throttle.recordFailure(origin.address, email);
      throw new ApiError('UNAUTHENTICATED', 'wrong email or password', 'password');
    }
    if (user.totp_enabled_at === null) {
      if (totp !== undefined)
        throw invalidInput('totp', 'this user has no second factor: send email and password');
      return this.open(user, origin, false);
    }
    // The password was right; the code is the second factor. A missing code is asked for (no
    // failure counted); a wrong or replayed one counts towards the throttle like a password.
    if (totp === undefined)
      throw new ApiError(
        'UNAUTHENTICATED',
        'this user signs in with a second factor: send the code of the authenticator app as totp',
        'totp',
      );
    if (!(await this.totp.claim(user, totp))) {
      await this.throttle.recordFailure(origin.address, email);
      throw new ApiError('UNAUTHENTICATED', 'wrong or already used code', 'totp');
    }
    return this.open(user, origin, true);
  }

  /** The session a cookie's token opens, or 401. */
  async authenticate(token: string | undefined): Promise<ConsoleIdentity> {
    if (token === undefined || !CONSOLE_TOKEN.test(token))
      throw new ApiError('UNAUTHENTICATED', 'sign in to the console first');
    const now = this.effects.clock.now();
    const session = await this.db
      .selectFrom('console_sessions')
      .selectAll()
      .where('token_hash', '=', hashConsoleToken(token))
      .executeTakeFirst();
    if (
      session === undefined ||
      session.revoked_at !== null ||
      session.expires_at <= now ||
      session.last_seen_at + SESSION_IDLE_MS <= now
    )
      throw new ApiError('UNAUTHENTICATED', 'your console session has ended; sign in again');
    const user = await this.users.byId(session.user_id);
    if (user.disabled_at !== null)
      throw new ApiError('UNAUTHENTICATED', 'your console session has ended; sign in again');
    if (now - session.last_seen_at >= SEEN_WRITE_INTERVAL_MS)
      await this.db
        .updateTable('console_sessions')
        .set({ last_seen_at: now })
        .where('id', '=', session.id)
        .execute();
    return { user, session, token };
  }

  async signOut(identity: ConsoleIdentity): Promise<void> {
    await this.end(identity.user.id, identity.session.id);
  }

  async list(identity: ConsoleIdentity): Promise<ConsoleSession[]> {
    const now = this.effects.clock.now();
    const rows = await this.db
      .selectFrom('console_sessions')
      .selectAll()
      .where('user_id', '=', identity.user.id)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .where('last_seen_at', '>', now - SESSION_IDLE_MS)
      .orderBy('created_at', 'desc')
      .execute();
    return rows.map((row) => sessionView(row, identity.session.id));
  }

  /** Ends one of the user's own sessions (404 for anyone else's). */
  async revoke(identity: ConsoleIdentity, sessionId: string): Promise<void> {
    const ended = await this.end(identity.user.id, sessionId);
    if (!ended) throw notFound('session');
  }

  /**
   * Changes the password after checking the current one, and ends every other session of the
   * user (a stolen session does not survive the owner's password change). A wrong current
   * password counts like a failed sign-in, by `address` and the user's email: a stolen session
   * cannot guess the password it does not know (429 past the throttle, the right one included).
   */
  async changePassword(
    identity: ConsoleIdentity,
    input: Unparsed<typeof passwordChangeInput>,
    address: string,
  ): Promise<void> {
    const { current_password: current, new_password: next } = parseInput(
      passwordChangeInput,
      input,
    );
    await this.throttle.refuseIfBlocked(address, identity.user.email);
    if (!(await passwordMatches(current, identity.user.password_hash))) {
      await this.throttle.recordFailure(address, identity.user.email);
      throw new ApiError('PERMISSION_DENIED', 'the current password is wrong', 'current_password');
    }
    const passwordHash = await hashPassword(next);
    const now = this.effects.clock.now();
    await this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('console_users')
        .set({ password_hash: passwordHash, password_changed_at: now })
        .where('id', '=', identity.user.id)
        .execute();
      await endSessionsOf(trx, identity.user.id, now, identity.session.id);
    });
  }

  /**
   * A new session for a user whose credentials were just proved (a sign-in, a sign-up);
   * `secondFactor`: the TOTP code was proved too.
   */
  async open(
    user: ConsoleUserTable,
    origin: ClientOrigin,
    secondFactor: boolean,
  ): Promise<{ token: string; identity: ConsoleIdentity }> {
    const now = this.effects.clock.now();
    const token = newConsoleToken();
    const session: ConsoleSessionTable = {
      id: this.effects.ids.next('cs'),
      user_id: user.id,
      token_hash: hashConsoleToken(token),
      created_at: now,
      last_seen_at: now,
      expires_at: now + SESSION_LIFETIME_MS,
      revoked_at: null,
      address: origin.address.slice(0, 100),
      user_agent: origin.userAgent.slice(0, 300),
      totp_verified_at: secondFactor ? now : null,
    };
    await this.db.insertInto('console_sessions').values(session).execute();
    return { token, identity: { user, session, token } };
  }

  private async end(userId: string, sessionId: string): Promise<boolean> {
    const ended = await this.db
      .updateTable('console_sessions')
      .set({ revoked_at: this.effects.clock.now() })
      .where('id', '=', sessionId)
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return ended.numUpdatedRows === 1n;
  }
}

/** A session as `GET /console/api/sessions` lists it to its user. */
export function sessionView(row: ConsoleSessionTable, currentId: string): ConsoleSession {
  return {
    object: 'console_session',
    id: row.id,
    created_at: new Date(row.created_at).toISOString(),
    last_seen_at: new Date(row.last_seen_at).toISOString(),
    expires_at: new Date(row.expires_at).toISOString(),
    address: row.address,
    user_agent: row.user_agent,
    current: row.id === currentId,
  };
}
