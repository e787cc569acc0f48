import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { errorWithoutRequestId, startGateway, type TestGateway } from '../helpers/gateway.js';

/** Records are readable only by the key that created them; every other key sees a missing id. */
describeEachDialect('cross-key isolation on $name', (dialect) => {
  let gateway: TestGateway;
  let owner: string;
  let sameAccountKey: string;
  let otherAccountKey: string;
  let requestId: string;
  let idempotencyKey: string;

  beforeAll(async () => {
    gateway = await startGateway(dialect);
    const account = await gateway.account(10_000_000);
    owner = account.key;
    sameAccountKey = (await gateway.newKey(account.accountId)).key;
    otherAccountKey = (await gateway.account(10_000_000)).key;
    idempotencyKey = randomUUID();
    const response = await gateway.call('POST', '/v1/embeddings', {
      key: owner,
      body: { model: 'sim-embed', input: 'private' },
      idempotencyKey,
    });
    requestId = String(response.headers['x-service-request-id']);
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const routes = () => [
    {
      name: 'GET by id',
      method: 'GET' as const,
      url: `/v1/requests/${requestId}`,
      missing: `/v1/requests/req_doesnotexist000000000000`,
    },
    {
      name: 'GET by idempotency key',
      method: 'GET' as const,
      url: `/v1/requests?idempotency_key=${idempotencyKey}`,
      missing: `/v1/requests?idempotency_key=${randomUUID()}`,
    },
    {
      name: 'POST settle',
      method: 'POST' as const,
      url: `/v1/requests/${requestId}/settle`,
      missing: `/v1/requests/req_doesnotexist000000000000/settle`,
    },
  ];

  it('lets the creating key read its record', async () => {
    for (const route of routes().filter((candidate) => candidate.method === 'GET')) {
      const response = await gateway.call(route.method, route.url, { key: owner });
      expect(response.statusCode, route.name).toBe(200);
    }
  });

  for (const who of ['another key of the same account', 'a key of another account'] as const) {
    it(`answers ${who} exactly as for a missing id, on every record route`, async () => {
      const key = who === 'a key of another account' ? otherAccountKey : sameAccountKey;
      for (const route of routes()) {
        const hidden = await gateway.call(route.method, route.url, { key });
        const missing = await gateway.call(route.method, route.missing, { key });
        expect(hidden.statusCode, route.name).toBe(404);
        expect(errorWithoutRequestId(hidden), route.name).toEqual(errorWithoutRequestId(missing));
        expect(Object.keys(hidden.headers).sort(), route.name).toEqual(
          Object.keys(missing.headers).sort(),
        );
      }
    });
  }
});
