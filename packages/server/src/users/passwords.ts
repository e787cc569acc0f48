import { hash, verify } from '@node-rs/argon2';
import { z } from 'zod';
import { requiredAs } from '../errors/input-schema.js';

/**
 * Console passwords: argon2id through @node-rs/argon2 (docs/decisions/0011-console.md), with the
 * library's defaults (19 MiB, 2 passes, 1 lane: OWASP's minimum for argon2id), computed off the
 * event loop. The PHC string keeps its own parameters, so raising them later still verifies old
 * hashes.
 */
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 200;

const NOT_A_PASSWORD = `must be a string of ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`;

/**
 * A password being set (an invitation accepted, a sign-up, a change), required: long enough to
 * resist guessing, short enough to hash cheaply, counted in characters (code points), not in
 * UTF-16 units.
 */
export const newPassword = requiredAs(
  NOT_A_PASSWORD,
  z.string({ error: NOT_A_PASSWORD }).refine(
    (password) => {
      const length = [...password].length;
      return length >= MIN_PASSWORD_LENGTH && length <= MAX_PASSWORD_LENGTH;
    },
    { error: `must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long` },
  ),
);

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/**
 * Checks a password against a stored hash. Without a hash (unknown user, invitation not yet
 * accepted) it still spends one hash's time, so answer times do not tell which emails exist.
 */
export async function passwordMatches(password: string, stored: string | null): Promise<boolean> {
  if (stored === null) {
    await verify(await placeholderHash(), password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}

let placeholder: Promise<string> | undefined;
function placeholderHash(): Promise<string> {
  placeholder ??= hash('placeholder password, matches nothing anyone sends');
  return placeholder;
}
