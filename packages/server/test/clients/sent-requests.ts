import { expect } from 'vitest';
import type { TestGateway } from '../helpers/gateway.js';

/** One HTTP request a client library sent, as it left the process. */
export interface SentRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
}

/** A `fetch` that notes every request (after any wrapper added its headers), then sends it. */
export function observingFetch(sent: SentRequest[]): typeof fetch {
  return (input, init) => {
    const request = input instanceof Request ? input : undefined;
    const url = new URL(input instanceof Request ? input.url : input.toString());
    const headers = new Headers(init?.headers ?? request?.headers);
    sent.push({
      method: (init?.method ?? request?.method ?? 'GET').toUpperCase(),
      path: url.pathname,
      idempotencyKey: headers.get('Idempotency-Key'),
    });
    return fetch(input, init);
  };
}

/**
 * Every POST sent carried its own UUID key, and the gateway holds exactly one record per POST —
 * found by that key, in `status` — and no other record was made since `recordsBefore`.
 */
export async function expectOneRecordPerPost(
  gateway: TestGateway,
  key: string,
  sent: readonly SentRequest[],
  recordsBefore: number,
  status = 'succeeded',
): Promise<void> {
  const posts = sent.filter((request) => request.method === 'POST');
  expect(posts.length).toBeGreaterThan(0);
  const keys = posts.map((request) => request.idempotencyKey);
  for (const idempotencyKey of keys) {
    expect(idempotencyKey).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
  }
  expect(new Set(keys).size).toBe(keys.length);
  for (const idempotencyKey of keys) {
    const record = await gateway.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
      key,
    });
    expect(record.statusCode).toBe(200);
    expect(record.json<{ status: string }>().status).toBe(status);
  }
  expect(await countRecords(gateway)).toBe(recordsBefore + posts.length);
}

export async function countRecords(gateway: TestGateway): Promise<number> {
  const row = await gateway.services.store.db
    .selectFrom('requests')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
