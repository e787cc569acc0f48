import { describe, expect, it } from 'vitest';
import { withFields } from '../../src/util/with-fields.js';

/**
 * `withFields` stands in for `{ ...base, ...fields }` on the hot path (an upstream body, a
 * record's columns). The risk: a body sent upstream or a record written with different fields or
 * a different field order (JSON keys keep their order) than the spread gave.
 */
describe('withFields', () => {
  it('gives the spread own properties, values and order, a field of base keeping its place', () => {
    const base = { model: 'caller-model', messages: [{ role: 'user' }], stream: true, user: 'u' };
    const fields = { model: 'upstream-model', stream: false, extra: 1 };
    const built = withFields(base, fields);
    expect(built).toEqual({ ...base, ...fields });
    expect(JSON.stringify(built)).toBe(JSON.stringify({ ...base, ...fields }));
    expect(Object.keys(built)).toEqual(['model', 'messages', 'stream', 'user', 'extra']);
  });

  it('copies: neither the base nor the fields object is changed or shared', () => {
    const base = { a: 1 };
    const fields = { b: 2 };
    const built = withFields(base, fields);
    expect(built).not.toBe(base);
    expect(built).not.toBe(fields);
    expect(base).toEqual({ a: 1 });
    expect(fields).toEqual({ b: 2 });
  });
});
