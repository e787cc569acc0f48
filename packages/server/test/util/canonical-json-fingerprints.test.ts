import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/util/canonical-json.js';

/**
 * Risk: canonical JSON feeds every idempotency fingerprint and price-version comparison. Its
 * fast path (native JSON.stringify with sorted copies) must give byte for byte the text of the
 * reference writer below (the original implementation), or a retried request stops matching
 * its record and the same prices look like a new version.
 */
function reference(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, inner]) => inner !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${reference(inner)}`).join(',')}}`;
}

/** A small deterministic generator (mulberry32), so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const KEYS = ['b', 'a', 'Z', 'é', '10', '9', '0', '01', '-1', '1.5', 'aa', '', '\u{1F600}', 'ä'];

function randomValue(next: () => number, depth: number): unknown {
  const pick = next();
  if (depth > 4 || pick < 0.3) {
    const primitives = [null, true, false, 0, -0, 1.5, -7, 1e21, 'text', '', 'é"\\\n', undefined];
    return primitives[Math.floor(next() * primitives.length)];
  }
  if (pick < 0.55)
    return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth + 1));
  const object: Record<string, unknown> = {};
  for (let count = Math.floor(next() * 6); count > 0; count -= 1)
    object[KEYS[Math.floor(next() * KEYS.length)] ?? 'k'] = randomValue(next, depth + 1);
  return object;
}

describe('canonical JSON for fingerprints', () => {
  it('writes exactly the reference text for 5,000 random JSON values', () => {
    const next = random(20_260_101);
    for (let round = 0; round < 5_000; round += 1) {
      const value = randomValue(next, 0);
      expect(canonicalJson(value)).toBe(reference(value));
    }
  });

  it('sorts keys by code units, integer-like keys included', () => {
    expect(canonicalJson({ b: 1, a: { 9: 'x', 10: 'y', z: [{ d: 1, c: 2 }] } })).toBe(
      '{"a":{"10":"y","9":"x","z":[{"c":2,"d":1}]},"b":1}',
    );
    expect(canonicalJson({ b: undefined, a: [undefined] })).toBe('{"a":[null]}');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('gives equal text for equal bodies whatever their key order', () => {
    const body = JSON.parse('{"model":"m","messages":[{"role":"user","content":"hi"}],"n":1}');
    const reordered = JSON.parse('{"n":1,"messages":[{"content":"hi","role":"user"}],"model":"m"}');
    expect(canonicalJson(body)).toBe(canonicalJson(reordered));
  });
});
