import { createHash } from 'node:crypto';

/**
 * The signature of a thinking block that came through a chat-completions upstream:
 * `tollgate.v1.` and the base64url SHA-256 of the thinking text. Not a secret and not proof of
 * anything but the text's integrity: it marks the block as Tollgate's, so that a later turn may
 * send it back (and it is then not forwarded: chat upstreams take no reasoning back), while a
 * block signed by Anthropic itself is told apart and refused on a chat channel.
 */
const PREFIX = 'tollgate.v1.';

export function tollgateSignature(thinking: string): string {
  return `${PREFIX}${createHash('sha256').update(thinking).digest('base64url')}`;
}

/** True when `signature` is Tollgate's for exactly this text. */
export function isTollgateSignature(thinking: string, signature: string): boolean {
  return signature.startsWith(PREFIX) && signature === tollgateSignature(thinking);
}
