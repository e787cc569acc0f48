import { hash } from 'node:crypto';

/**
 * JSON with object keys sorted (by UTF-16 code units) at every depth, so equal bodies hash
 * equally whatever their key order. Contract: for JSON data (what `JSON.parse` returns, or plain
 * objects of it); members whose value is `undefined` are left out, as `JSON.stringify` does.
 * Depth is bounded by the caller (the JSON body parser refuses bodies deeper than 64 levels).
 *
 * Fast path: the native `JSON.stringify`, with a replacer that hands over a key-sorted copy of
 * each object whose keys are not already in order (~3x faster than writing the text in JS on a
 * large body; this runs on every billed request, on the event loop). Objects with integer-like
 * keys ("10", "9") cannot be rebuilt in code-unit order (JavaScript enumerates those first, in
 * numeric order), so a value holding one is written by the slower, exact writer instead.
 */
export function canonicalJson(value: unknown): string {
  let rebuiltInOrder = true;
  const text = JSON.stringify(value, (_key, inner: unknown) => {
    if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) return inner;
    const keys = Object.keys(inner);
    if (isInOrder(keys)) return inner;
    keys.sort();
    const sorted: Record<string, unknown> = {};
    for (const key of keys) sorted[key] = (inner as Record<string, unknown>)[key];
    if (!isInOrder(Object.keys(sorted))) rebuiltInOrder = false;
    return sorted;
  });
  return rebuiltInOrder ? (text ?? 'null') : writeCanonical(value);
}

function isInOrder(keys: readonly string[]): boolean {
  for (let index = 1; index < keys.length; index += 1)
    if ((keys[index - 1] ?? '') > (keys[index] ?? '')) return false;
  return true;
}

/** The exact writer: the same text, built key by key. */
function writeCanonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(writeCanonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, inner]) => inner !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${writeCanonical(inner)}`).join(',')}}`;
}

/** One-shot (no Hash object per call): it runs on every billed request. */
export function sha256Hex(text: string | Uint8Array): string {
  return hash('sha256', text, 'hex');
}
