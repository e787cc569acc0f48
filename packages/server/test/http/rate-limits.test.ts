import { afterEach, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { describeEachBackend, redisService } from '../helpers/redis.js';
import { describeNeeding } from '../helpers/required-services.js';

// Without TOLLGATE_TEST_REDIS_URL the Redis suites are registered skipped, loudly (helpers/redis.ts).
const [sqlite] = dialects;
const redisUrl = redisService.url;

describeEachBackend('per-key rate limits in %s', (backend) => {
  let gateways: TestGateway[] = [];
  afterEach(async () => {
    for (const gateway of gateways) await gateway.close();
    gateways = [];
  });

  async function start(limits: { requests_per_minute: number; concurrent_requests: number }) {
    if (sqlite === undefined) throw new Error('no sqlite dialect');
    const gateway = await startGateway(sqlite, {
      config: testConfig({ limits: { body_bytes: 1_000_000, ...limits } }),
      services: backend === 'redis' ? { redisUrl } : {},
    });
    gateways.push(gateway);
    return gateway;
  }

  it('answers 429 RATE_LIMITED with Retry-After past the per-minute limit, per key', async () => {
    const gateway = await start({ requests_per_minute: 3, concurrent_requests: 100 });
    const first = await gateway.account(0);
    const second = await gateway.account(0);
    const statuses = [];
    for (let index = 0; index < 4; index += 1)
      statuses.push((await gateway.call('GET', '/v1/models', { key: first.key })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await gateway.call('GET', '/v1/models', { key: first.key });
    expect(limited.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await gateway.call('GET', '/v1/models', { key: second.key })).statusCode).toBe(200);
  });

  it('limits requests in flight per key, and frees the slot when a request ends', async () => {
    const gateway = await start({ requests_per_minute: 100_000, concurrent_requests: 2 });
    const { key } = await gateway.account(10_000_000);
    const slow = (text: string) =>
      gateway.call('POST', '/v1/embeddings', {
        key,
        body: { model: 'sim-embed', input: `${text} [sim:delay=300]` },
      });
    const results = await Promise.all([slow('a'), slow('b'), slow('c')]);
    expect(results.map((response) => response.statusCode).sort()).toEqual([200, 200, 429]);
    expect((await gateway.call('GET', '/v1/models', { key })).statusCode).toBe(200);
    await gateway.expectLedgerClean();
  });
});

describeNeeding(redisService, 'shared limits through Redis', () => {
  it('counts one key across two instances', async () => {
    if (sqlite === undefined || redisUrl === undefined) throw new Error('setup');
    const first = await startGateway(sqlite, {
      config: testConfig({
        limits: { body_bytes: 1_000_000, requests_per_minute: 4, concurrent_requests: 100 },
      }),
      services: { redisUrl },
    });
    try {
      // A second instance is modelled by a second RateLimits over the same Redis.
      const { accountId, key, keyId } = await first.account(0);
      const { RateLimits } = await import('../../src/http/plugins/rate-limit.js');
      const other = new RateLimits(
        {
          requestsPerMinute: 4,
          concurrentRequests: 100,
          concurrentRequestsPerAccount: 100,
          concurrencyLeaseMs: 30_000,
        },
        first.services.redis,
      );
      (await other.acquire({ keyId, accountId }))();
      (await other.acquire({ keyId, accountId }))();
      const statuses = [];
      for (let index = 0; index < 3; index += 1)
        statuses.push((await first.call('GET', '/v1/models', { key })).statusCode);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await first.close();
    }
  });

  it('counts all keys of one account across two instances', async () => {
    if (sqlite === undefined || redisUrl === undefined) throw new Error('setup');
    const first = await startGateway(sqlite, {
      config: testConfig({
        limits: {
          body_bytes: 1_000_000,
          requests_per_minute: 1_000,
          concurrent_requests: 100,
          concurrent_requests_per_account: 2,
        },
      }),
      services: { redisUrl },
    });
    try {
      const { accountId, key } = await first.account(0);
      const { RateLimits } = await import('../../src/http/plugins/rate-limit.js');
      const other = new RateLimits(
        {
          requestsPerMinute: 1_000,
          concurrentRequests: 100,
          concurrentRequestsPerAccount: 2,
          concurrencyLeaseMs: 30_000,
        },
        first.services.redis,
      );
      // The other instance holds both of the account's slots with another key.
      const release = [
        await other.acquire({ keyId: 'another-key', accountId }),
        await other.acquire({ keyId: 'another-key', accountId }),
      ];
      const refused = await first.call('GET', '/v1/models', { key });
      expect(refused.statusCode).toBe(429);
      for (const free of release) free();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await first.call('GET', '/v1/models', { key })).statusCode).toBe(200);
    } finally {
      await first.close();
    }
  });
});
