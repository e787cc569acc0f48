import { createHash, createHmac } from 'node:crypto';

/**
 * Public share tokens: 43 base62 characters carrying 256 bits, so a URL-safe path segment that
 * cannot be guessed, and that `pathForLog` (log-redaction.ts) blots out of every access line by
 * its route (`CREDENTIAL_ROUTES.publicShare`), whatever its length.
 *
 * The token is never stored. It is HMAC-SHA256 over the share's id, keyed with the owner's API
 * key — which the gateway keeps only as a hash — for a share a key asked for, or with the
 * gateway's share-link secret (share-link-secret.ts, never in the database) for one asked for
 * from the console, where no key is at hand (`token_source`, migration 027). Either can show
 * it again on every read of the share; the database keeps only its SHA-256 (`token_hash`), by
 * which the public route finds the share. A copy of the database therefore opens no share.
 * docs/shares.md, "The token", and docs/decisions/0016-console-share-links.md say why.
 */
export const SHARE_TOKEN_LENGTH = 43;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_SHAPE = new RegExp(`^[0-9A-Za-z]{${SHARE_TOKEN_LENGTH}}$`);
/** Domain separation: the same key never yields the same bytes for another purpose. */
const CONTEXT = 'tollgate share token v1\n';

/**
 * The public token of `shareId`, as only its deriving secret can compute it: the owner's API key
 * (its plaintext), or the share-link secret for a share asked for from the console.
 */
export function shareToken(secret: string | Buffer, shareId: string): string {
  const digest = createHmac('sha256', secret).update(CONTEXT).update(shareId).digest();
  // 62^43 > 2^256: every digest has its own 43-character spelling (an encoding, no bias).
  let rest = BigInt(`0x${digest.toString('hex')}`);
  let text = '';
  for (let index = 0; index < SHARE_TOKEN_LENGTH; index += 1) {
    text = BASE62[Number(rest % 62n)] + text;
    rest /= 62n;
  }
  return text;
}

/** What the database keeps and the public route looks up: hex SHA-256 of the token. */
export function shareTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Whether `text` can be a token at all: anything else is a 404 without a database look-up. */
export function looksLikeShareToken(text: string): boolean {
  return TOKEN_SHAPE.test(text);
}

/** The public URL of a token: a path on the gateway's own origin, outside `/v1`, needing no key. */
export function publicSharePath(token: string): string {
  return `/s/${token}`;
}
