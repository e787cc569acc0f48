/**
 * `sha256:<hex>` of text or bytes, by WebCrypto (global in Node 20+ and in browsers), so the
 * SDK's main entry needs no `node:` module.
 */
export async function sha256(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  let hex = '';
  for (const byte of digest) hex += byte.toString(16).padStart(2, '0');
  return `sha256:${hex}`;
}
