import type { ConsoleInvitation, ConsoleUser, ConsoleUserPage } from '@tollgate/protocol';
import { sql, type Kysely } from 'kysely';
import { z } from 'zod';
import { ApiError, invalidInput, notFound } from '../errors/api-error.js';
import { parseInput, requiredAs, type Unparsed } from '../errors/input-schema.js';
import type { ConsoleUserTable, Database } from '../store/schema.js';
import type { Clock, IdGenerator } from '../util/effects.js';
import { listPage, parseLimit } from '../util/list-page.js';
import { canonicalEmail, consoleEmail, mailboxOf, taggedAddressPattern } from './console-email.js';
import { setUserDisabled, type AccessChange } from './console-user-access.js';
import { CONSOLE_TOKEN, hashConsoleToken, newConsoleToken } from './console-tokens.js';
import { hashPassword, newPassword } from './passwords.js';

const NOT_A_ROLE = 'must be member or operator';

/**
 * An invitation. Which `account_id` goes with which role (a member's account, which must exist;
 * none for an operator) is `invite`'s rule, across the fields and against the database, answered
 * naming `account`.
 */
const invitationInput = z.object({
  email: consoleEmail,
  role: requiredAs(NOT_A_ROLE, z.enum(['member', 'operator'], { error: NOT_A_ROLE })),
  account_id: z.unknown().optional(),
});

/** An invitation accepted: the password it sets. */
const acceptanceInput = z.object({ password: newPassword });

/** The users list's filter: the user of that address, any spelling of it. */
const userListFilter = z.object({ email: consoleEmail.optional() });

/** How long an invitation link works. */
export const INVITATION_LIFETIME_MS = 7 * 24 * 3_600_000;

/** A console user as the console API shows it (never the password hash). */
export function consoleUserView(row: ConsoleUserTable): ConsoleUser {
  return {
    object: 'console_user',
    id: row.id,
    email: row.email,
    role: row.role,
    account_id: row.account_id,
    totp_enabled: row.totp_enabled_at !== null,
    disabled_at: row.disabled_at === null ? null : new Date(row.disabled_at).toISOString(),
    created_at: new Date(row.created_at).toISOString(),
  };
}

/** The path of an invitation's link (the console's page that sets the password). */
const invitePath = (token: string) => `/console/invite/${token}`;

/**
 * The full link of an invitation (whose `invite_url` the APIs answer relative to the gateway's
 * address, `/console/invite/<token>`): the gateway's origin (`https://gateway.example.com`, any
 * trailing `/` dropped) before its path, as the console's invite page puts the page's own
 * origin before it. The one place a full invitation link is built.
 */
export function withOrigin(invitation: ConsoleInvitation, origin: string): ConsoleInvitation {
  return { ...invitation, invite_url: `${origin.replace(/\/+$/, '')}${invitation.invite_url}` };
}

/**
 * Console users and their invitations (docs/console.md). An operator invites; the invitation's
 * one-time link sets the password. Inviting an email again (its invitation lost or expired)
 * issues a new link for the same user and voids the older ones, as long as no password was set.
 */
export class ConsoleUsers {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly effects: { clock: Clock; ids: IdGenerator },
    /** `server.console_email_ignore_plus_tags` (console-email.ts). */
    private readonly options: { readonly ignorePlusTags?: boolean } = {},
  ) {}

  async invite(input: Unparsed<typeof invitationInput>): Promise<ConsoleInvitation> {
    const { email, role, account_id: given } = parseInput(invitationInput, input);
    const accountId = given ?? null;
    if (role === 'member' && typeof accountId !== 'string')
      throw invalidInput('account', 'a member belongs to one account: give its id');
    if (role === 'operator' && accountId !== null)
      throw invalidInput('account', 'an operator belongs to no account');
    if (typeof accountId === 'string') {
      const account = await this.db
        .selectFrom('accounts')
        .select('id')
        .where('id', '=', accountId)
        .executeTakeFirst();
      if (account === undefined) throw invalidInput('account', `no account ${accountId}`);
    }
    const now = this.effects.clock.now();
    const token = newConsoleToken();
    const user = await this.db.transaction().execute(async (trx) => {
      let row = await this.holderOf(email, trx);
      if (row !== undefined && row.email !== email)
        throw new ApiError(
          'IDEMPOTENCY_CONFLICT',
          `${email} is the mailbox of the console user ${row.email} (server.console_email_ignore_plus_tags)`,
          'email',
        );
      if (row !== undefined && row.disabled_at !== null)
        throw new ApiError(
          'IDEMPOTENCY_CONFLICT',
          `${email} is disabled: enable the user first (tollgate users enable)`,
          'email',
        );
      if (row === undefined) {
        row = {
          id: this.effects.ids.next('cu'),
          email,
          role,
          account_id: typeof accountId === 'string' ? accountId : null,
          password_hash: null,
          created_at: now,
          password_changed_at: null,
          disabled_at: null,
          totp_secret: null,
          totp_enabled_at: null,
          totp_last_step: null,
        };
        await trx.insertInto('console_users').values(row).execute();
      } else if (row.password_hash !== null) {
        throw new ApiError(
          'IDEMPOTENCY_CONFLICT',
          `${email} has already set a password; they sign in with it`,
          'email',
        );
      } else if (row.role !== role || row.account_id !== accountId) {
        throw new ApiError(
          'IDEMPOTENCY_CONFLICT',
          `${email} was invited with another role or account`,
          'email',
        );
      }
      await trx
        .updateTable('console_invitations')
        .set({ used_at: now })
        .where('user_id', '=', row.id)
        .where('used_at', 'is', null)
        .execute();
      await trx
        .insertInto('console_invitations')
        .values({
          id: this.effects.ids.next('inv'),
          user_id: row.id,
          token_hash: hashConsoleToken(token),
          created_at: now,
          expires_at: now + INVITATION_LIFETIME_MS,
          used_at: null,
        })
        .execute();
      return row;
    });
    return {
      object: 'console_invitation',
      user: consoleUserView(user),
      invite_url: invitePath(token),
      expires_at: new Date(now + INVITATION_LIFETIME_MS).toISOString(),
    };
  }

  /** Who an invitation is for (the set-password page shows the email); 404 when unusable. */
  async invitation(token: string): Promise<{ email: string; expires_at: string }> {
    const found = await this.openInvitation(this.db, token);
    return { email: found.email, expires_at: new Date(found.expires_at).toISOString() };
  }

  /**
   * Sets the password of an invited user and uses the invitation up, once: the claim is a
   * guarded update, so two tabs racing with the same link set one password.
   */
  async acceptInvitation(
    token: string,
    input: Unparsed<typeof acceptanceInput>,
  ): Promise<ConsoleUser> {
    const { password } = parseInput(acceptanceInput, input);
    const passwordHash = await hashPassword(password);
    return this.db.transaction().execute(async (trx) => {
      const found = await this.openInvitation(trx, token);
      const now = this.effects.clock.now();
      const claimed = await trx
        .updateTable('console_invitations')
        .set({ used_at: now })
        .where('id', '=', found.invitation_id)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      if (claimed.numUpdatedRows !== 1n) throw unusableInvitation();
      await trx
        .updateTable('console_users')
        .set({ password_hash: passwordHash, password_changed_at: now })
        .where('id', '=', found.user_id)
        .execute();
      const user = await trx
        .selectFrom('console_users')
        .selectAll()
        .where('id', '=', found.user_id)
        .executeTakeFirstOrThrow();
      return consoleUserView(user);
    });
  }

  /** The user of exactly this address, any spelling of it (console-email.ts): sign-in's look-up. */
  async byEmail(email: string): Promise<ConsoleUserTable | undefined> {
    return this.db
      .selectFrom('console_users')
      .selectAll()
      .where('email', '=', canonicalEmail(email))
      .executeTakeFirst();
  }

  /**
   * The user who holds the mailbox of a canonical address, if any: the address itself, or, with
   * `+tags` ignored, the same mailbox with or without a tag. What sign-up and invitations refuse
   * a second user for.
   */
  async holderOf(
    canonical: string,
    db: Kysely<Database> = this.db,
  ): Promise<ConsoleUserTable | undefined> {
    const exact = await db
      .selectFrom('console_users')
      .selectAll()
      .where('email', '=', canonical)
      .executeTakeFirst();
    const ignorePlusTags = this.options.ignorePlusTags ?? false;
    if (exact !== undefined || !ignorePlusTags) return exact;
    const mailbox = mailboxOf(canonical, true);
    const candidates = await db
      .selectFrom('console_users')
      .selectAll()
      .where((eb) =>
        eb.or([
          eb('email', '=', mailbox),
          eb('email', 'like', sql<string>`${taggedAddressPattern(mailbox)} escape '\\'`),
        ]),
      )
      .orderBy('created_at', 'asc')
      .execute();
    return candidates.find((row) => mailboxOf(row.email, true) === mailbox);
  }

  /**
   * Console users, oldest first (the operator's users page): `email` the user of that address
   * (any spelling), `limit` 1–100 (default 100), `after` the `next_cursor` of the page before.
   */
  async list(query: {
    email?: unknown;
    limit?: unknown;
    after?: unknown;
  }): Promise<ConsoleUserPage> {
    const limit = parseLimit(query.limit, 100);
    const { email } = parseInput(userListFilter, { email: query.email });
    let select = this.db.selectFrom('console_users').selectAll();
    if (email !== undefined) select = select.where('email', '=', email);
    if (query.after !== undefined) {
      const cursor =
        typeof query.after === 'string'
          ? await this.db
              .selectFrom('console_users')
              .select(['created_at', 'id'])
              .where('id', '=', query.after)
              .executeTakeFirst()
          : undefined;
      if (cursor === undefined) throw invalidInput('after', 'is not a console user id');
      select = select.where((eb) =>
        eb.or([
          eb('created_at', '>', cursor.created_at),
          eb.and([eb('created_at', '=', cursor.created_at), eb('id', '>', cursor.id)]),
        ]),
      );
    }
    const rows = await select
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .limit(limit + 1)
      .execute();
    return listPage(rows, limit, consoleUserView);
  }

  /** Disables a user or enables them again: console-user-access.ts. */
  async setDisabled(change: AccessChange): Promise<{ user: ConsoleUser; changed: boolean }> {
    const { user, changed } = await setUserDisabled(this.db, this.effects.clock.now(), change);
    return { user: consoleUserView(user), changed };
  }

  /** The console users who are members of an account (an operator's account page). */
  async membersOf(accountId: string): Promise<ConsoleUser[]> {
    const rows = await this.db
      .selectFrom('console_users')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at', 'asc')
      .execute();
    return rows.map(consoleUserView);
  }

  async byId(id: string): Promise<ConsoleUserTable> {
    const row = await this.db
      .selectFrom('console_users')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    if (row === undefined) throw notFound('console user');
    return row;
  }

  private async openInvitation(db: Kysely<Database>, token: string) {
    if (!CONSOLE_TOKEN.test(token)) throw unusableInvitation();
    const found = await db
      .selectFrom('console_invitations')
      .innerJoin('console_users', 'console_users.id', 'console_invitations.user_id')
      .select([
        'console_invitations.id as invitation_id',
        'console_invitations.user_id',
        'console_invitations.expires_at',
        'console_invitations.used_at',
        'console_users.email',
        'console_users.disabled_at',
      ])
      .where('console_invitations.token_hash', '=', hashConsoleToken(token))
      .executeTakeFirst();
    if (
      found === undefined ||
      found.used_at !== null ||
      found.disabled_at !== null ||
      found.expires_at <= this.effects.clock.now()
    )
      throw unusableInvitation();
    return found;
  }
}

/** One answer for unknown, used and expired links: a link tells nothing about others. */
function unusableInvitation(): ApiError {
  return new ApiError(
    'NOT_FOUND',
    'no such invitation, or it was used or has expired; ask an operator for a new link',
    'token',
  );
}
