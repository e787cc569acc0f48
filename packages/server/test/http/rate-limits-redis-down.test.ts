import { afterEach, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { redisService } from '../helpers/redis.js';
import { describeNeeding } from '../helpers/required-services.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const [sqlite] = dialects;

/**
 * The risk: Redis (shared rate limits only) goes down and takes the gateway with it — every
 * request failing, or waiting on Redis reconnections — or worse, a request half-counted moves
 * money wrongly. While Redis is unreachable each instance counts alone (the limits still
 * hold, per instance), requests are served and billed exactly as ever, and once Redis answers
 * again the counting is shared again.
 */
describeNeeding(redisService, 'rate limits while Redis is down', () => {
  let gateway: TestGateway | undefined;
  let proxy: TcpProxy | undefined;
  afterEach(async () => {
    await gateway?.close();
    await proxy?.close();
    gateway = proxy = undefined;
  });

  it('serves and bills every request, limits per instance, and shares again once Redis is back', async () => {
    const target = new URL(redisService.url ?? '');
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    if (sqlite === undefined) throw new Error('no sqlite dialect');
    gateway = await startGateway(sqlite, {
      config: testConfig({
        limits: { body_bytes: 1_000_000, requests_per_minute: 4, concurrent_requests: 100 },
      }),
      services: { redisUrl: `redis://127.0.0.1:${proxy.port}` },
    });
    const redis = gateway.services.redis;
    const { key, accountId } = await gateway.account(10_000_000);
    const embed = (input: string) =>
      (gateway as TestGateway).call('POST', '/v1/embeddings', {
        key,
        body: { model: 'sim-embed', input },
      });
    for (let waited = 0; redis?.status !== 'ready'; waited += 20) {
      if (waited > 5_000) throw new Error('Redis never connected');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await embed('counted in Redis')).statusCode).toBe(200);

    await proxy.cut();
    for (let waited = 0; redis.status === 'ready'; waited += 20) {
      if (waited > 5_000) throw new Error('the cut was not noticed');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const started = Date.now();
    const during = [];
    for (let index = 0; index < 5; index += 1)
      during.push((await embed(`while Redis is down ${index}`)).statusCode);
    // This instance's own counter starts afresh: four a minute, then 429.
    expect(during).toEqual([200, 200, 200, 200, 429]);
    // Not waiting on reconnection attempts for each request.
    expect(Date.now() - started).toBeLessThan(5_000);

    const records = await gateway.services.store.db
      .selectFrom('requests')
      .select(['status', 'amount'])
      .where('account_id', '=', accountId)
      .execute();
    expect(records.filter((record) => record.status === 'succeeded')).toHaveLength(5);
    const billed = records.reduce((sum, record) => sum + (record.amount ?? 0), 0);
    expect((await gateway.balance(accountId)).balance).toBe(10_000_000 - billed);
    await gateway.expectLedgerClean();

    await proxy.restore();
    for (let waited = 0; redis.status !== 'ready'; waited += 50) {
      if (waited > 10_000) throw new Error('Redis never reconnected');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Shared again: Redis's own count for this minute (one request) goes on.
    const after = [];
    for (let index = 0; index < 4; index += 1)
      after.push((await embed(`Redis is back ${index}`)).statusCode);
    expect(after).toEqual([200, 200, 200, 429]);
  });
});
