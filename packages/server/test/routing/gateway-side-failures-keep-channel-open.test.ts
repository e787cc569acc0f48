import { afterEach, expect, it } from 'vitest';
import type { ConfigFile } from '../../src/config/schema.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { ChannelStatus } from '../../src/routing/channel-router.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const SLOW_MS = 1_500;
/**
 * Holds the upstream's one connection, on another model's channel: its success must not close
 * the breaker of the channel under test (`sim-embed`) behind the failures' back.
 */
const slowChat = {
  model: 'sim-chat',
  messages: [{ role: 'user', content: `slow [sim:delay=${SLOW_MS}]` }],
};

/** One upstream connection, waited for at most `queueTimeoutMs`. */
function onePoolConnection(queueTimeoutMs: number): ConfigFile {
  return {
    ...testConfig(),
    upstreams: {
      simulator: {
        kind: 'simulator',
        connections: 1,
        connections_per_account: 1,
        queue_timeout_ms: queueTimeoutMs,
      },
    },
  };
}

/**
 * The risk (found by the reference harness on a slow machine: 1,282 answers of "no usable
 * channel" in one max phase): a request that failed on the gateway's side before anything was
 * sent — no connection of this instance's pool free within `queue_timeout_ms`, or the caller
 * gone while it waited for one — counted as a certain failure of the channel. A few of them
 * opened the channel's circuit breaker, and every caller, of every account, was then turned
 * away with 503 for the cool-down although the upstream was healthy. Such failures are still
 * the caller's 503 (nothing sent, nothing charged) but no verdict on the channel.
 */
describeEachDialect('failures on the gateway side keep the channel open ($name)', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  /** A breaker that opens after two certain failures, for a minute. */
  async function start(queueTimeoutMs: number): Promise<TestGateway> {
    return startGateway(dialect, {
      config: onePoolConnection(queueTimeoutMs),
      services: { breaker: { failureThreshold: 2, cooldownMs: 60_000, maxCooldownMs: 60_000 } },
    });
  }

  /**
   * Waits until the slow request holds the pool's one connection: its record is claimed
   * (`processing`), and the upstream call follows the claim at once; a fixed sleep was not
   * enough on a loaded machine (an embedding reached the free connection first and was charged).
   */
  async function holdsTheConnection(client: TestGateway, key: string, idempotencyKey: string) {
    await expect
      .poll(
        async () =>
          (
            await client.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, { key })
          ).json<{ status?: string }>().status,
        { timeout: 10_000, interval: 20 },
      )
      .toBe('processing');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  async function breakerOf(client: TestGateway, model: string): Promise<string | undefined> {
    const channels = (await client.admin('GET', '/admin/v1/channels'))['data'] as ChannelStatus[];
    return channels.find((channel) => channel.model === model)?.breaker;
  }

  it('queue timeouts: each caller gets its 503, and the next caller is served', async () => {
    gateway = await start(100);
    const client = gateway;
    const busy = await client.account(100_000_000);
    const others = await client.account(100_000_000);
    const slowKey = crypto.randomUUID();
    const slow = client.call('POST', '/v1/chat/completions', {
      key: busy.key,
      body: slowChat,
      idempotencyKey: slowKey,
    });
    await holdsTheConnection(client, busy.key, slowKey);
    const before = await client.balance(others.accountId);
    for (let index = 0; index < 3; index += 1) {
      const timedOut = await client.call('POST', '/v1/embeddings', {
        key: others.key,
        body: { model: 'sim-embed', input: `waits ${index}` },
      });
      expect(timedOut.statusCode, timedOut.body).toBe(503);
      expect(timedOut.json()).toMatchObject({ error: { code: 'MODEL_UNAVAILABLE' } });
    }
    // Nothing was sent for them: nothing charged, nothing held.
    expect(await client.balance(others.accountId)).toEqual(before);
    expect((await slow).statusCode).toBe(200);
    expect(await breakerOf(client, 'sim-embed')).toBe('closed');
    const served = await client.call('POST', '/v1/embeddings', {
      key: others.key,
      body: { model: 'sim-embed', input: 'after the wait' },
    });
    expect(served.statusCode, served.body).toBe(200);
  }, 30_000);

  it('callers who leave while queued do not close the channel to the others', async () => {
    // A long wait for a connection: the callers leave long before it would time out.
    gateway = await start(10_000);
    const client = gateway;
    const base = await client.listen();
    const busy = await client.account(100_000_000);
    const leaving = await client.account(100_000_000);
    const post = (path: string, key: string, body: object, signal?: AbortSignal) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'idempotency-key': crypto.randomUUID(),
        },
        body: JSON.stringify(body),
        ...(signal === undefined ? {} : { signal }),
      });
    const embed = (key: string, input: string, signal?: AbortSignal) =>
      post('/embeddings', key, { model: 'sim-embed', input }, signal);
    const slowKey = crypto.randomUUID();
    const slow = fetch(`${base}/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${busy.key}`,
        'content-type': 'application/json',
        'idempotency-key': slowKey,
      },
      body: JSON.stringify(slowChat),
    });
    await holdsTheConnection(client, busy.key, slowKey);
    const before = await client.balance(leaving.accountId);
    const left = [0, 1, 2].map(async (index) => {
      const controller = new AbortController();
      const sent = embed(leaving.key, `leaves ${index}`, controller.signal);
      setTimeout(() => controller.abort(), 150);
      await expect(sent).rejects.toThrow();
    });
    await Promise.all(left);
    expect((await slow).status).toBe(200);
    // The queued requests that lost their callers were never sent: nothing charged, nothing held.
    await expect.poll(() => client.balance(leaving.accountId)).toEqual(before);
    expect(await breakerOf(client, 'sim-embed')).toBe('closed');
    const served = await embed(leaving.key, 'after they left');
    expect(served.status, await served.clone().text()).toBe(200);
  }, 30_000);
});
