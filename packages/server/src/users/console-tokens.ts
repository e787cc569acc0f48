import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { base62 } from '../util/effects.js';

/**
 * Invitation and session tokens: 32 random bytes as 32 base62 characters (about 190 bits). Only
 * their SHA-256 is stored, so a copy of the database opens no session and accepts no
 * invitation. They never look like an API key (`tgk_…`), which a URL may not carry.
 */
export function newConsoleToken(): string {
  return base62(randomBytes(32));
}

export function hashConsoleToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * The CSRF token of a session: derived from the session's own secret token, so it needs no
 * storage, cannot be guessed without the cookie, and dies with the session.
 */
export function csrfTokenFor(sessionToken: string): string {
  return createHash('sha256').update(`csrf:${sessionToken}`).digest('base64url');
}

/** Constant-time comparison of two strings (different lengths compare unequal). */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** What a console token looks like; anything else is refused before a lookup. */
export const CONSOLE_TOKEN = /^[0-9A-Za-z]{32}$/;
