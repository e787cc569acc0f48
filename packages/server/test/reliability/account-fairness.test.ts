import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import type { ConfigFile } from '../../src/config/schema.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/** A small upstream pool: 4 connections, one account may use 2 of them at once. */
function smallPoolConfig(overrides: { queue_timeout_ms?: number; perAccount?: number } = {}) {
  const base = testConfig();
  return {
    ...base,
    upstreams: {
      simulator: {
        kind: 'simulator',
        connections: 4,
        connections_per_account: overrides.perAccount ?? 2,
        queue_timeout_ms: overrides.queue_timeout_ms ?? 30_000,
      },
    },
  } satisfies ConfigFile;
}

const SLOW_MS = 1_000;
/**
 * The documented bound (docs/security.md): while another account saturates its share of an
 * upstream with slow requests, an account's own fast requests wait for no one of them.
 */
const OTHER_ACCOUNT_P99_BOUND_MS = SLOW_MS / 2;

function p99(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? 0;
}

describeEachDialect('one account cannot stall the others on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it("another account's p99 stays under the bound while five keys of one account hold slow requests", async () => {
    gateway = await startGateway(dialect, { config: smallPoolConfig() });
    const client = gateway;
    const greedy = await client.account(100_000_000);
    const greedyKeys = [greedy.key];
    for (let index = 0; index < 4; index += 1)
      greedyKeys.push((await client.newKey(greedy.accountId)).key);
    const other = await client.account(100_000_000);

    const slow = greedyKeys.flatMap((key) =>
      [1, 2].map(() =>
        client.call('POST', '/v1/embeddings', {
          key,
          body: { model: 'sim-embed', input: `slow [sim:delay=${SLOW_MS}]` },
        }),
      ),
    );
    // Let the slow requests take every slot they may.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const latencies: number[] = [];
    for (let index = 0; index < 20; index += 1) {
      const started = performance.now();
      const response = await client.call('POST', '/v1/embeddings', {
        key: other.key,
        body: { model: 'sim-embed', input: `fast ${index}` },
      });
      latencies.push(performance.now() - started);
      expect(response.statusCode).toBe(200);
    }
    expect(p99(latencies)).toBeLessThan(OTHER_ACCOUNT_P99_BOUND_MS);
    const statuses = (await Promise.all(slow)).map((response) => response.statusCode);
    // The greedy account's own requests wait their turn and all succeed.
    expect(statuses.every((status) => status === 200)).toBe(true);
  }, 60_000);

  it('all keys of one account together are limited: the request over the account limit is 429', async () => {
    gateway = await startGateway(dialect, {
      config: {
        ...testConfig(),
        limits: { ...testConfig().limits, concurrent_requests_per_account: 2 },
      },
    });
    const client = gateway;
    const owner = await client.account(100_000_000);
    const keys = [owner.key, (await client.newKey(owner.accountId)).key];
    const third = (await client.newKey(owner.accountId)).key;
    const slow = keys.map((key) =>
      client.call('POST', '/v1/embeddings', {
        key,
        body: { model: 'sim-embed', input: 'slow [sim:delay=800]' },
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refused = await client.call('POST', '/v1/embeddings', {
      key: third,
      body: { model: 'sim-embed', input: 'one too many' },
    });
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    expect(refused.headers['retry-after']).toBeDefined();
    // Another account is not affected.
    const stranger = await client.account(1_000_000);
    const served = await client.call('POST', '/v1/embeddings', {
      key: stranger.key,
      body: { model: 'sim-embed', input: 'hello' },
    });
    expect(served.statusCode).toBe(200);
    expect((await Promise.all(slow)).map((response) => response.statusCode)).toEqual([200, 200]);
  });

  it('a request that waited too long for an upstream connection is failed with its hold released, never unknown', async () => {
    gateway = await startGateway(dialect, {
      config: smallPoolConfig({ queue_timeout_ms: 300, perAccount: 1 }),
    });
    const owner = await gateway.account(100_000_000);
    const slow = gateway.call('POST', '/v1/embeddings', {
      key: owner.key,
      body: { model: 'sim-embed', input: 'slow [sim:delay=1500]' },
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const idempotencyKey = randomUUID();
    const queued = await gateway.call('POST', '/v1/embeddings', {
      key: owner.key,
      idempotencyKey,
      body: { model: 'sim-embed', input: 'waits' },
    });
    expect(queued.statusCode).toBe(503);
    expect(queued.json()).toMatchObject({ error: { code: 'MODEL_UNAVAILABLE' } });
    const record = await gateway.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
      key: owner.key,
    });
    expect(record.json()).toMatchObject({ status: 'failed', reserve: { state: 'released' } });
    expect((await slow).statusCode).toBe(200);
    expect((await gateway.balance(owner.accountId)).held).toBe(0);
  });

  it('a caller who gives up while queued leaves a failed record and no hold, not submission_unknown', async () => {
    gateway = await startGateway(dialect, { config: smallPoolConfig({ perAccount: 1 }) });
    const owner = await gateway.account(100_000_000);
    const base = await gateway.listen();
    const post = (input: string, idempotencyKey: string, signal?: AbortSignal) =>
      fetch(`${base}/embeddings`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${owner.key}`,
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey,
        },
        body: JSON.stringify({ model: 'sim-embed', input }),
        ...(signal === undefined ? {} : { signal }),
      });
    const slow = post('slow [sim:delay=1500]', randomUUID());
    await new Promise((resolve) => setTimeout(resolve, 100));
    const giveUp = new AbortController();
    const idempotencyKey = randomUUID();
    const abandoned = post('waits', idempotencyKey, giveUp.signal).catch(() => 'aborted');
    await new Promise((resolve) => setTimeout(resolve, 200));
    giveUp.abort();
    expect(await abandoned).toBe('aborted');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const record = await gateway.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
      key: owner.key,
    });
    expect(record.json()).toMatchObject({ status: 'failed', reserve: { state: 'released' } });
    expect((await slow).status).toBe(200);
    expect((await gateway.balance(owner.accountId)).held).toBe(0);
  });
});
