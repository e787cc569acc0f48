import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, expect, it } from 'vitest';
import { RateLimits } from '../../src/http/plugins/rate-limit.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { redisService } from '../helpers/redis.js';
import { describeNeeding } from '../helpers/required-services.js';

const [sqlite] = dialects;
const redisUrl = redisService.url;

/**
 * Concurrency slots shared through Redis are leases (docs/configuration.md, `limits.
 * concurrency_lease_ms`): an instance killed while holding slots must not lock its keys out
 * for longer than one lease, however often callers retry; a request longer than the lease keeps
 * its slot, and gives it back once, leaving nothing behind.
 */
/** Whether `name` still exists once a give-back sent without waiting had time to land (1 s). */
async function leftInRedis(redis: Redis, name: string): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    if ((await redis.exists(name)) === 0) return 0;
    await delay(20);
  }
  return redis.exists(name);
}

// Without TOLLGATE_TEST_REDIS_URL: registered skipped, loudly (helpers/redis.ts); CI requires it.
describeNeeding(redisService, 'concurrency slots in Redis as leases', () => {
  let gateways: TestGateway[] = [];
  let clients: Redis[] = [];
  afterEach(async () => {
    for (const gateway of gateways) await gateway.close();
    for (const client of clients) client.disconnect();
    gateways = [];
    clients = [];
  });

  async function start(limits: {
    concurrent_requests: number;
    concurrent_requests_per_account: number;
    concurrency_lease_ms: number;
  }) {
    if (sqlite === undefined || redisUrl === undefined) throw new Error('setup');
    const gateway = await startGateway(sqlite, {
      config: testConfig({
        limits: { body_bytes: 1_000_000, requests_per_minute: 100_000, ...limits },
      }),
      services: { redisUrl },
    });
    gateways.push(gateway);
    return gateway;
  }

  function redisClient(): Redis {
    const client = new Redis(redisUrl ?? '', { maxRetriesPerRequest: 0 });
    clients.push(client);
    return client;
  }

  it('frees the slots of an instance killed while holding them within one lease, however often callers retry', async () => {
    const leaseMs = 1_000;
    const gateway = await start({
      concurrent_requests: 2,
      concurrent_requests_per_account: 2,
      concurrency_lease_ms: leaseMs,
    });
    const { accountId, key, keyId } = await gateway.account(0);
    const { key: otherKey } = await gateway.newKey(accountId);
    // Another instance takes both slots of the key (and so of the account), then is killed:
    // it never gives them back and never renews them.
    const dying = redisClient();
    const instance = new RateLimits(
      {
        requestsPerMinute: 100_000,
        concurrentRequests: 2,
        concurrentRequestsPerAccount: 2,
        concurrencyLeaseMs: leaseMs,
      },
      dying,
    );
    await instance.acquire({ keyId, accountId });
    await instance.acquire({ keyId, accountId });
    const killedAt = Date.now();
    dying.disconnect();

    const observer = redisClient();
    const statuses: number[] = [];
    let freedAfter: number | undefined;
    while (Date.now() - killedAt < 10_000) {
      const status = (await gateway.call('GET', '/v1/models', { key })).statusCode;
      statuses.push(status);
      // Refused attempts never push the expiry beyond one lease.
      for (const counter of [`key:${keyId}`, `account:${accountId}`])
        expect(await observer.pttl(`tollgate:slots:${counter}`)).toBeLessThanOrEqual(leaseMs);
      if (status === 200) {
        freedAfter = Date.now() - killedAt;
        break;
      }
      await delay(20);
    }
    expect(statuses[0]).toBe(429);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(3);
    expect(freedAfter).toBeDefined();
    // One lease, with room for a loaded machine.
    expect(freedAfter).toBeLessThan(leaseMs + 2_000);
    expect((await gateway.call('GET', '/v1/models', { key: otherKey })).statusCode).toBe(200);
  });

  it('keeps the slot of a request longer than the lease, and gives it back once, leaving nothing behind', async () => {
    const leaseMs = 1_500;
    const gateway = await start({
      concurrent_requests: 1,
      concurrent_requests_per_account: 10,
      concurrency_lease_ms: leaseMs,
    });
    const { accountId, key, keyId } = await gateway.account(10_000_000);
    const long = gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'long [sim:delay=5000]' },
    });
    // Well past two leases: only renewal keeps the slot.
    await delay(leaseMs * 2 + 500);
    const observer = redisClient();
    expect(await observer.exists(`tollgate:slots:key:${keyId}`)).toBe(1);
    const refused = await gateway.call('GET', '/v1/models', { key });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    expect((await long).statusCode).toBe(200);

    // Given back as the answer is sent: nothing left in Redis, no counter below zero.
    for (const counter of [`key:${keyId}`, `account:${accountId}`])
      expect(await leftInRedis(observer, `tollgate:slots:${counter}`)).toBe(0);
    expect((await gateway.call('GET', '/v1/models', { key })).statusCode).toBe(200);
    expect(await leftInRedis(observer, `tollgate:slots:key:${keyId}`)).toBe(0);
    await gateway.expectLedgerClean();
  }, 20_000);

  it('serves a key whose integer counter an earlier version left in Redis (rolling upgrade)', async () => {
    const gateway = await start({
      concurrent_requests: 2,
      concurrent_requests_per_account: 2,
      concurrency_lease_ms: 30_000,
    });
    const { accountId, key, keyId } = await gateway.account(0);
    const observer = redisClient();
    await observer.set(`tollgate:inflight:key:${keyId}`, '1', 'EX', 60);
    await observer.set(`tollgate:inflight:account:${accountId}`, '1', 'EX', 60);
    expect((await gateway.call('GET', '/v1/models', { key })).statusCode).toBe(200);
    await observer.del(`tollgate:inflight:key:${keyId}`, `tollgate:inflight:account:${accountId}`);
  });
});
