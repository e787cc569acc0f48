import { randomUUID } from 'node:crypto';

/**
 * A `fetch` that gives every POST a new `Idempotency-Key` (a UUID) unless the call set one, so
 * each step of an automatic tool loop is its own request. `onKey` sees each key before the
 * request is sent: write it down, and a lost answer can be read back by it.
 *
 * Safe only with the client's retries off (`maxRetries: 0`): a retry through this fetch would
 * carry a new key and be a second, separately billed request.
 */
export function withIdempotencyKeys(
  inner: typeof fetch = fetch,
  onKey: (key: string, url: string) => void = () => {},
): typeof fetch {
  return (input, init) => {
    const request = input instanceof Request ? input : undefined;
    const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
    if (method !== 'POST') return inner(input, init);
    const headers = new Headers(init?.headers ?? request?.headers);
    const key = headers.get('Idempotency-Key') ?? randomUUID();
    headers.set('Idempotency-Key', key);
    onKey(key, input instanceof Request ? input.url : input.toString());
    return inner(input, { ...init, headers });
  };
}
