/*
 * The console's people and their sessions (docs/console.md, "Sign-in, sessions, CSRF", "Second
 * factor (TOTP)", "Taking access away", "Self sign-up"): console users, the session state a
 * sign-in answers, invitations, open sessions, the second factor, and the bodies those calls
 * take. `/console/api` only: no API key reaches them. Times are ISO 8601 strings.
 */

/** `member`: the pages of one account; `operator`: the operator pages, every account. */
export type ConsoleRole = 'member' | 'operator';

/** A console user as the console API shows it (never its password or its TOTP secret). */
export interface ConsoleUser {
  object: 'console_user';
  /** `cu_…`. */
  id: string;
  email: string;
  role: ConsoleRole;
  /** The account a member belongs to; `null` for an operator. */
  account_id: string | null;
  /** Whether sign-in asks for a TOTP code (docs/console.md, "Second factor (TOTP)"). */
  totp_enabled: boolean;
  /** When an operator disabled the user (no sign-in, no session, no invitation); else `null`. */
  disabled_at: string | null;
  created_at: string;
}

/** `GET /console/api/admin/accounts/{id}/members`: the account's console users, unpaged. */
export interface ConsoleUserList {
  object: 'list';
  data: ConsoleUser[];
}

/** `GET /console/api/admin/users`: console users, oldest first, a page at a time. */
export interface ConsoleUserPage {
  object: 'list';
  data: ConsoleUser[];
  has_more: boolean;
  /** The last user's id, to pass as `after` for the next page; `null` on the last page. */
  next_cursor: string | null;
}

/**
 * `GET /console/api/session`, and the answer of a sign-in (`POST /console/api/session`) and a
 * sign-up (`POST /console/api/signup`): who is signed in, and the CSRF token every call that
 * changes something sends back as `X-CSRF-Token`.
 */
export interface ConsoleSessionState {
  object: 'console_session_state';
  user: ConsoleUser;
  csrf_token: string;
  /** `cs_…`: this session, as `GET /console/api/sessions` lists it. */
  session_id: string;
  /** When the session ends however active it is (seven days after sign-in). */
  expires_at: string;
}

/** `POST /console/api/session`: sign in. `totp` only once the answer asked for it (`param`). */
export interface ConsoleSignInBody {
  email: string;
  password: string;
  /** The app's current six-digit code, for a user with `totp_enabled`. */
  totp?: string;
}

/** `POST /console/api/signup` (only when `server.console_self_signup` is on). */
export interface ConsoleSignUpBody {
  email: string;
  password: string;
}

/** `GET /console/api/config`: what the signed-out pages need to know. */
export interface ConsoleConfig {
  object: 'console_config';
  /** Whether the sign-in page links to a sign-up (`server.console_self_signup`). */
  self_signup: boolean;
}

/** `GET /console/api/invitations/{token}`: whom an open invitation link is for. */
export interface ConsoleInvitationState {
  object: 'console_invitation_state';
  email: string;
  /** When the link stops working. */
  expires_at: string;
}

/** `POST /console/api/invitations/{token}`: the password that uses the link up. */
export interface ConsoleInvitationAcceptBody {
  password: string;
}

/** `POST /console/api/admin/invitations`: invite a member of an account, or an operator. */
export interface ConsoleInvitationBody {
  email: string;
  role: ConsoleRole;
  /** The member's account; absent for an operator. */
  account_id?: string;
}

/** The answer of `POST /console/api/admin/invitations` (201). */
export interface ConsoleInvitation {
  object: 'console_invitation';
  /** The invited user, without a password until the link is used. */
  user: ConsoleUser;
  /**
   * `/console/invite/<token>`, relative to the gateway's address. Shown this once: the token is
   * stored hashed.
   */
  invite_url: string;
  expires_at: string;
}

/** One of the user's open sessions. */
export interface ConsoleSession {
  object: 'console_session';
  /** `cs_…`. */
  id: string;
  created_at: string;
  /** The last call it made, written at most once a minute. */
  last_seen_at: string;
  expires_at: string;
  /** The client address it signed in from (behind trusted proxies, the client's). */
  address: string;
  /** The browser's `User-Agent` at sign-in; empty when it sent none. */
  user_agent: string;
  /** The session this list was asked from. */
  current: boolean;
}

/** `GET /console/api/sessions`: the user's open sessions, unpaged. */
export interface ConsoleSessionList {
  object: 'list';
  data: ConsoleSession[];
}

/** `POST /console/api/password` (204): every other session of the user ends. */
export interface ConsolePasswordBody {
  current_password: string;
  new_password: string;
}

/** `POST /console/api/totp`: a new secret for the authenticator app, shown this once. */
export interface ConsoleTotpSetup {
  object: 'console_totp_setup';
  /** Base32. */
  secret: string;
  /** `otpauth://totp/…`, the secret as the app's QR code carries it. */
  otpauth_url: string;
}

/** `POST /console/api/totp/enable` (204): the app's current code turns the factor on. */
export interface ConsoleTotpEnableBody {
  code: string;
}

/** `DELETE /console/api/totp` (204): proved by a current code, or by the password. */
export type ConsoleTotpRemovalBody = { code: string } | { password: string };
