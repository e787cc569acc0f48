import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  InsufficientFundsError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  type RequestEntry,
  type Tollgate,
} from '../src/index.js';
import { clientFor, liveGateway, testConfig, type TestGateway } from './helpers/gateway.js';

/*
 * The risk: a caller cannot tell a key problem from a funds problem from an idempotency
 * conflict (and retries the wrong thing), or an error loses the request id it must report.
 * Each status family has its class, with status, code, message and requestId; nothing is
 * retried (one fetch per call).
 */

let gateway: TestGateway | undefined;

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

/** A client that counts its fetches. */
function countingClient(baseURL: string, key: string): { client: Tollgate; fetches: () => number } {
  let fetches = 0;
  const client = clientFor(baseURL, key, {
    fetch: (url, init) => {
      fetches += 1;
      return fetch(url, init);
    },
  });
  return { client, fetches: () => fetches };
}

async function caught(promise: Promise<unknown>): Promise<APIError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(APIError);
  const apiError = error as APIError;
  expect(apiError.message.length).toBeGreaterThan(0);
  expect(apiError.requestId).toMatch(/^req_/);
  return apiError;
}

describe('error classes', () => {
  it('400, 401, 402, 403, 404, 409 and 5xx each raise their class, once', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const rich = await gateway.account(1_000_000);
    const poor = await gateway.account(0);
    const service = await gateway.newKey(rich.accountId, { kind: 'service' });
    const { client, fetches } = countingClient(live.baseURL, rich.key);

    const badRequest = await caught(
      client.chat.completions.create({ model: 'sim-chat', messages: [] }),
    );
    expect(badRequest).toBeInstanceOf(BadRequestError);
    expect(badRequest).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
    expect(fetches()).toBe(1);

    const unauthenticated = await caught(
      clientFor(live.baseURL, 'tgk_not_a_key').embeddings.create({
        model: 'sim-embed',
        input: 'x',
      }),
    );
    expect(unauthenticated).toBeInstanceOf(AuthenticationError);
    expect(unauthenticated).toMatchObject({ status: 401, code: 'API_KEY_INVALID' });

    const funds = await caught(
      clientFor(live.baseURL, poor.key).embeddings.create({ model: 'sim-embed', input: 'x' }),
    );
    expect(funds).toBeInstanceOf(InsufficientFundsError);
    expect(funds).toMatchObject({ status: 402, code: 'INSUFFICIENT_FUNDS' });

    const denied = await caught(clientFor(live.baseURL, service.key).assets.list());
    expect(denied).toBeInstanceOf(PermissionDeniedError);
    expect(denied).toMatchObject({ status: 403, code: 'PERMISSION_DENIED' });

    const missing = await caught(client.requests.get('req_missing'));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    const noModel = await caught(client.embeddings.create({ model: 'no-such-model', input: 'x' }));
    expect(noModel).toMatchObject({ status: 404, code: 'MODEL_NOT_FOUND' });

    const idempotencyKey = randomUUID();
    await client.embeddings.create({ model: 'sim-embed', input: 'first' }, { idempotencyKey });
    const conflict = await caught(
      client.embeddings.create({ model: 'sim-embed', input: 'second' }, { idempotencyKey }),
    );
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(conflict).toMatchObject({ status: 409, code: 'IDEMPOTENCY_CONFLICT', idempotencyKey });

    const before = fetches();
    const unavailable = await caught(
      client.embeddings.create({ model: 'sim-embed', input: 'busy [sim:fail=503]' }),
    );
    expect(unavailable).toBeInstanceOf(InternalServerError);
    expect(unavailable).toMatchObject({ status: 503, code: 'MODEL_UNAVAILABLE' });
    // The POST once, then one read of its record to tell "not done" from "unknown"; no resend.
    expect(fetches() - before).toBe(2);
    await gateway.expectLedgerClean();
  });

  it('429 raises RateLimitError with retryAfter', async () => {
    const config = testConfig();
    const live = await liveGateway({
      ...config,
      limits: { ...config.limits, requests_per_minute: 2 },
    });
    gateway = live.gateway;
    const { key } = await gateway.account(1_000_000);
    const { client, fetches } = countingClient(live.baseURL, key);
    await client.embeddings.create({ model: 'sim-embed', input: 'one' });
    await client.embeddings.create({ model: 'sim-embed', input: 'two' });
    const limited = await caught(client.embeddings.create({ model: 'sim-embed', input: 'three' }));
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect((limited as RateLimitError).retryAfter).toBeGreaterThan(0);
    expect(fetches()).toBe(3);
  });
});

describe('a request that never left', () => {
  it('connection refused is a ConnectionError, journaled not_sent (nothing to recover)', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const client = clientFor(`http://127.0.0.1:${port}/v1`, 'tgk_unused');
    const idempotencyKey = randomUUID();
    const error = await client.embeddings
      .create({ model: 'sim-embed', input: 'x' }, { idempotencyKey })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ConnectionError);
    expect((await client.journal.read(idempotencyKey)) as RequestEntry).toMatchObject({
      state: 'not_sent',
    });
  });
});
