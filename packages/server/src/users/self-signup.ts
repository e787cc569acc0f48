import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { AccountService } from '../accounts/account-service.js';
import { ApiError } from '../errors/api-error.js';
import { parseInput, type Unparsed } from '../errors/input-schema.js';
import type { ConsoleUserTable, Database } from '../store/schema.js';
import type { Clock, IdGenerator } from '../util/effects.js';
import type { ClientOrigin, ConsoleIdentity, ConsoleSessions } from './console-sessions.js';
import { consoleEmail } from './console-email.js';
import type { ConsoleUsers } from './console-users.js';
import type { LoginThrottle } from './login-throttle.js';
import { hashPassword, newPassword } from './passwords.js';

/** A sign-up: the member's email (canonical form) and password. */
const signUpInput = z.object({ email: consoleEmail, password: newPassword });

/**
 * Self sign-up (docs/console.md, "Self sign-up"), only when `server.console_self_signup` is
 * true: a new account and its member user in one transaction, then a session as a sign-in
 * opens it. Every attempt counts towards the address's sign-up throttle before anything is
 * created.
 */
export class ConsoleSignUp {
  constructor(
    private readonly deps: {
      readonly db: Kysely<Database>;
      readonly effects: { clock: Clock; ids: IdGenerator };
      readonly accounts: AccountService;
      readonly users: ConsoleUsers;
      readonly sessions: ConsoleSessions;
      readonly throttle: LoginThrottle;
      readonly enabled: boolean;
    },
  ) {}

  get enabled(): boolean {
    return this.deps.enabled;
  }

  async signUp(
    input: Unparsed<typeof signUpInput>,
    origin: ClientOrigin,
  ): Promise<{ token: string; identity: ConsoleIdentity }> {
    if (!this.deps.enabled)
      throw new ApiError(
        'PERMISSION_DENIED',
        'self sign-up is turned off on this gateway: ask an operator for an invitation',
      );
    const { email, password } = parseInput(signUpInput, input);
    await this.deps.throttle.claimSignUp(origin.address);
    // Hashed before the email is looked up, so a taken email answers in the time a free one does.
    const passwordHash = await hashPassword(password);
    const now = this.deps.effects.clock.now();
    const user = await this.deps.db.transaction().execute(async (trx) => {
      // Any spelling of an address in use, or (with `+tags` ignored) its mailbox: one answer.
      const taken = await this.deps.users.holderOf(email, trx);
      if (taken !== undefined) throw emailUnavailable();
      const account = await this.deps.accounts.create({ email }, trx).catch((error: unknown) => {
        // An account of that email exists (made by an operator, without a console user).
        if (error instanceof ApiError && error.code === 'IDEMPOTENCY_CONFLICT')
          throw emailUnavailable();
        throw error;
      });
      const row: ConsoleUserTable = {
        id: this.deps.effects.ids.next('cu'),
        email,
        role: 'member',
        account_id: account.id,
        password_hash: passwordHash,
        created_at: now,
        password_changed_at: now,
        disabled_at: null,
        totp_secret: null,
        totp_enabled_at: null,
        totp_last_step: null,
      };
      const inserted = await trx
        .insertInto('console_users')
        .values(row)
        .onConflict((conflict) => conflict.doNothing())
        .executeTakeFirst();
      // A sign-up of the same email won the race: this transaction (and its account) rolls back.
      if (inserted.numInsertedOrUpdatedRows !== 1n) throw emailUnavailable();
      return row;
    });
    return this.deps.sessions.open(user, origin, false);
  }
}

/**
 * One answer for an email that has a console user, an invitation or an account: it says the
 * email cannot sign up, not which of these it has. That the email is known at all cannot be
 * hidden without a mail round trip; the sign-up throttle bounds how many emails one address
 * can test.
 */
function emailUnavailable(): ApiError {
  return new ApiError(
    'IDEMPOTENCY_CONFLICT',
    'this email cannot sign up here: if it is yours, sign in (or ask an operator for an invitation)',
    'email',
  );
}
