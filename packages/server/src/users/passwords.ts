import { hash, verify } from '@node-rs/argon2';
import { invalidInput } from '../errors/api-error.js';

/**
 * Console passwords: argon2id through @node-rs/argon2 (docs/decisions/0011-console.md), with the
 * library's defaults (19 MiB, 2 passes, 1 lane: OWASP's minimum for argon2id), computed off the
 * event loop. The PHC string keeps its own parameters, so raising them later still verifies old
 * hashes.
 */
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 200;

/** Refuses a password too short to resist guessing or too long to hash cheaply (400 naming `field`). */
export function parsePassword(value: unknown, field: string): string {
  if (typeof value !== 'string')
    throw invalidInput(
      field,
      `must be a string of ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`,
    );
  const length = [...value].length;
  if (length < MIN_PASSWORD_LENGTH || length > MAX_PASSWORD_LENGTH)
    throw invalidInput(
      field,
      `must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long`,
    );
  return value;
}

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
