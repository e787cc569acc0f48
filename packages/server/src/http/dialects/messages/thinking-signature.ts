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

/**
 * The signature of a thinking block whose text is not shown (`thinking.display: "omitted"`):
 * `tollgate.text.v1.` and the base64url of the text. The block's `thinking` is empty, as
 * Anthropic's is, and the signature carries the text so that a later turn can give it back as
 * `reasoning_content` (DeepSeek and Kimi refuse a tool call without it). Not a secret: the
 * reasoning is the caller's own answer, merely not displayed.
 */
const CARRIED = 'tollgate.text.v1.';

export function carriedThinkingSignature(thinking: string): string {
  return `${CARRIED}${Buffer.from(thinking).toString('base64url')}`;
}

/** The text a carried signature holds; `undefined` for any other signature. */
export function carriedThinking(signature: string): string | undefined {
  if (!signature.startsWith(CARRIED)) return undefined;
  const encoded = signature.slice(CARRIED.length);
  if (!/^[A-Za-z0-9_-]*$/.test(encoded)) return undefined;
  return Buffer.from(encoded, 'base64url').toString('utf8');
}
