import { z } from 'zod';
import { parseInput, requiredAs } from '../errors/input-schema.js';

/**
 * The one rule by which console emails compare (docs/console.md, "Emails"): sign-up, sign-in,
 * invitations (console, admin API, CLI), the TOTP reset and the throttle's per-email count all
 * go through it, so two spellings of one mailbox are one user everywhere.
 *
 * - **Canonical form** (`canonicalEmail`): Unicode NFKC (a fullwidth `ａｌｉｃｅ` is `alice`, a
 *   ligature `ﬁ` is `fi`), then lower case. It is what `console_users.email` stores (migration
 *   034 rewrote the rows written before it) and what every look-up compares, so the column's
 *   unique index also refuses a lookalike that races its original.
 * - **`+tags`** (`server.console_email_ignore_plus_tags`, off by default): when on, `alice+x@`
 *   and `alice@` of one domain are one mailbox for sign-up and invitations (`mailboxOf`). A
 *   stored address keeps its tag (sign-in uses the address as it was given), so turning the
 *   option on or off rewrites nothing.
 */

const EMAIL = /^[^\s@\p{Cc}]{1,64}@[^\s@\p{Cc}]{1,255}$/u;

/** The canonical form of any string (no check that it is an email). */
export function canonicalEmail(value: string): string {
  // Lower-casing can produce a sequence NFKC would compose again (rare, but one pass each way
  // keeps the form a fixed point: canonicalEmail(canonicalEmail(x)) === canonicalEmail(x)).
  return value.normalize('NFKC').toLowerCase().normalize('NFKC');
}

const NOT_AN_EMAIL = 'must be an email address';

/**
 * A console user's email, required, as its canonical form: the field of the inputs that name a
 * user by email (an invitation, a sign-up, the users list's filter).
 */
export const consoleEmail = requiredAs(
  NOT_AN_EMAIL,
  z
    .string({ error: NOT_AN_EMAIL })
    .transform(canonicalEmail)
    .pipe(z.string().regex(EMAIL, { error: NOT_AN_EMAIL })),
);

/** `consoleEmail` of one value: anything else is 400 naming `email`. */
export function parseConsoleEmail(value: unknown): string {
  return parseInput(z.object({ email: consoleEmail }), { email: value }).email;
}

/** A canonical address split at its last `@`. */
function parts(canonical: string): { local: string; domain: string } {
  const at = canonical.lastIndexOf('@');
  return { local: canonical.slice(0, at), domain: canonical.slice(at + 1) };
}

/**
 * The mailbox a canonical address delivers to: with `ignorePlusTags`, the local part up to its
 * first `+` (a local part that starts with `+` keeps it: there is no mailbox before it).
 */
export function mailboxOf(canonical: string, ignorePlusTags: boolean): string {
  if (!ignorePlusTags) return canonical;
  const { local, domain } = parts(canonical);
  const plus = local.indexOf('+');
  return plus <= 0 ? canonical : `${local.slice(0, plus)}@${domain}`;
}

/**
 * The SQL `LIKE` pattern (escape character `\`) of every stored address of the same mailbox
 * with a tag (`alice+%@example.com`); the caller compares `mailboxOf` of each match, since `%`
 * also matches an `@`.
 */
export function taggedAddressPattern(mailbox: string): string {
  const { local, domain } = parts(mailbox);
  const escape = (text: string) => text.replace(/[\\%_]/g, (char) => `\\${char}`);
  return `${escape(local)}+%@${escape(domain)}`;
}
