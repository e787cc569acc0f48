import type { LineItem, TaskBilling } from '@tollgate/protocol';
import { expect } from 'vitest';

/*
 * Key lists of wire types, and the check that a real body carries exactly them. Every list is
 * checked against its type by `satisfies`: a key the type lacks, a key it has that the list
 * lacks, or the wrong presence does not compile. Shared by the wire-type tests.
 */

/** For each key of `T`: whether a body always carries it or may leave it out. */
export type Presence<T> = {
  readonly [K in keyof T]-?: object extends Pick<T, K> ? 'optional' : 'always';
};

export const lineItemKeys = {
  name: 'always',
  quantity: 'always',
  free_quantity: 'optional',
  unit_price: 'always',
  per_units: 'optional',
  amount: 'always',
  detail: 'always',
  measured: 'optional',
} as const satisfies Presence<LineItem>;
export const taskBillingKeys = {
  settlement_pending: 'always',
  actual_amount: 'optional',
  price_version: 'always',
  reserved_amount: 'always',
  settled_amount: 'always',
  state: 'always',
  currency: 'always',
  line_items: 'optional',
  pricing_rule: 'optional',
} as const satisfies Presence<TaskBilling>;

export type KeyList = Readonly<Record<string, 'always' | 'optional'>>;

/**
 * `body` is a JSON object carrying exactly the keys `keys` lists: none the type does not name,
 * every `always` key, and an optional key only with a value (never `null`: absent means absent).
 */
export function expectExactKeys(
  label: string,
  body: unknown,
  keys: KeyList,
): Record<string, unknown> {
  expect(body, `${label} is an object`).toBeTypeOf('object');
  expect(body, `${label} is an object`).not.toBeNull();
  const object = body as Record<string, unknown>;
  const present = Object.keys(object);
  const listed = Object.keys(keys);
  expect(
    present.filter((key) => !listed.includes(key)),
    `${label}: keys its wire type does not list`,
  ).toEqual([]);
  expect(
    listed.filter((key) => keys[key] === 'always' && !present.includes(key)),
    `${label}: keys its wire type says are always there`,
  ).toEqual([]);
  expect(
    listed.filter((key) => keys[key] === 'optional' && key in object && object[key] === null),
    `${label}: optional keys sent as null`,
  ).toEqual([]);
  return object;
}

/** `expectExactKeys` on each element of an array. */
export function expectEachExact(label: string, list: unknown, keys: KeyList): void {
  expect(Array.isArray(list), `${label} is an array`).toBe(true);
  (list as unknown[]).forEach((item, index) => expectExactKeys(`${label}[${index}]`, item, keys));
}
