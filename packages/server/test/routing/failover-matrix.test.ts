import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { seededRandom } from '../../src/routing/channel-selection.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { refusedUrl, startFaultFront, type FaultFront } from '../helpers/fault-front.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const timeouts = { connect_ms: 1_000, first_byte_ms: 400, idle_ms: 400 };

/** A default model entry served by `channels` instead of its single upstream. */
function routed(id: string, channels: object[]): ConfigFile['models'][number] {
  const base = defaultConfig.models.find((model) => model.id === id);
  if (base === undefined) throw new Error(`no default model ${id}`);
  const { upstream: _single, ...rest } = base;
  return { ...rest, channels } as ConfigFile['models'][number];
}

/**
 * The failover rule from the outside (docs/routing.md): two upstream accounts in front of one
 * simulator, counting the requests that reach each. A failure the upstream certainly did not
 * process moves the request to the next channel; any other failure stays on the record as it
 * is, and the second channel is never called. However many channels were tried, one record,
 * one hold, at most one charge.
 */
describeEachDialect('channel failover on $name', (dialect) => {
  let simulator: Simulator;
  let flaky: FaultFront;
  let healthy: FaultFront;
  let gateway: TestGateway;

  beforeAll(async () => {
    simulator = await startSimulator();
    flaky = await startFaultFront(simulator.url);
    healthy = await startFaultFront(simulator.url);
    const first = { weight: 1, priority: 10 };
    const second = { weight: 1, priority: 0 };
    gateway = await startGateway(dialect, {
      config: testConfig({
        upstreams: {
          refusing: { kind: 'openai', base_url: await refusedUrl(), timeouts },
          // TLS spoken to a plain HTTP server: the handshake fails before any request byte.
          tls: { kind: 'openai', base_url: healthy.url.replace('http:', 'https:'), timeouts },
          flaky: { kind: 'openai', base_url: flaky.url, timeouts },
          healthy: { kind: 'openai', base_url: healthy.url, timeouts },
        },
        models: [
          routed('sim-embed', [
            { upstream: 'flaky', model: 'sim-embed', ...first },
            { upstream: 'healthy', model: 'sim-embed', ...second },
          ]),
          {
            ...routed('sim-embed', [
              { id: 'refusing-embed', upstream: 'refusing', model: 'sim-embed', ...first },
              { id: 'healthy-embed', upstream: 'healthy', model: 'sim-embed', ...second },
            ]),
            id: 'embed-behind-refused',
          },
          {
            ...routed('sim-embed', [
              { id: 'tls-embed', upstream: 'tls', model: 'sim-embed', ...first },
              { id: 'healthy-embed-2', upstream: 'healthy', model: 'sim-embed', ...second },
            ]),
            id: 'embed-behind-tls',
          },
          routed('sim-chat', [
            { upstream: 'flaky', model: 'sim-chat', ...first },
            { upstream: 'healthy', model: 'sim-chat', ...second },
          ]),
        ],
      }),
      // Breakers out of the way: this suite counts calls per failure kind.
      services: {
        random: seededRandom(22),
        breaker: { failureThreshold: 1_000, cooldownMs: 1_000, maxCooldownMs: 1_000 },
      },
    });
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
    await flaky.close();
    await healthy.close();
    await simulator.close();
  });

  async function send(model: string, body: Record<string, unknown>, path = '/v1/embeddings') {
    const { accountId, key } = await gateway.account(10_000_000);
    const before = { flaky: flaky.calls, healthy: healthy.calls };
    const response = await gateway.call('POST', path, { key, body: { model, ...body } });
    const requestId = String(response.headers['x-service-request-id']);
    const record = await gateway.admin('GET', `/admin/v1/requests/${requestId}`);
    return {
      response,
      record,
      calls: { flaky: flaky.calls - before.flaky, healthy: healthy.calls - before.healthy },
      balance: await gateway.balance(accountId),
    };
  }

  /** One charge: the balance fell by exactly the record's bill, and nothing is left held. */
  function expectOneCharge(result: Awaited<ReturnType<typeof send>>): void {
    const bill = result.record['bill'] as { amount: number; captured: boolean };
    expect(bill.captured).toBe(true);
    expect(bill.amount).toBeGreaterThan(0);
    expect(result.balance).toEqual({
      balance: 10_000_000 - bill.amount,
      held: 0,
      available: 10_000_000 - bill.amount,
    });
  }

  it('connection refused (nothing sent) moves to the next channel; one charge', async () => {
    const result = await send('embed-behind-refused', { input: 'hello there' });
    expect(result.response.statusCode).toBe(200);
    expect(result.calls.healthy).toBe(1);
    expect(result.record['channel']).toBe('healthy-embed');
    expect(result.record['channel_attempts']).toEqual([
      {
        channel: 'refusing-embed',
        upstream: 'refusing',
        outcome: 'not_processed',
        detail: 'connect: ECONNREFUSED',
      },
      { channel: 'healthy-embed', upstream: 'healthy', outcome: 'succeeded', detail: null },
    ]);
    expectOneCharge(result);
  });

  it('a TLS handshake failure (nothing sent) moves to the next channel; one charge', async () => {
    const result = await send('embed-behind-tls', { input: 'hello there' });
    expect(result.response.statusCode).toBe(200);
    expect(result.calls.healthy).toBe(1);
    expect(result.record['channel']).toBe('healthy-embed-2');
    expect(result.record['channel_attempts']).toMatchObject([
      { channel: 'tls-embed', outcome: 'not_processed' },
      { channel: 'healthy-embed-2', outcome: 'succeeded' },
    ]);
    expectOneCharge(result);
  });

  it.each([503, 429, 401])(
    'upstream %i answered before any work moves to the next channel; one charge',
    async (status) => {
      flaky.mode = status;
      const result = await send('sim-embed', { input: 'hello there' });
      expect(result.response.statusCode).toBe(200);
      expect(result.calls).toEqual({ flaky: 1, healthy: 1 });
      expect(result.record['channel']).toBe('sim-embed~1');
      expect(result.record['channel_attempts']).toMatchObject([
        { channel: 'sim-embed~0', outcome: 'not_processed', detail: `upstream status ${status}` },
        { channel: 'sim-embed~1', outcome: 'succeeded' },
      ]);
      expectOneCharge(result);
    },
  );

  it.each([500, 502, 400])(
    'upstream %i (may have worked, or refused this request) never moves: released, second channel not called',
    async (status) => {
      flaky.mode = status;
      const result = await send('sim-embed', { input: 'hello there' });
      expect(result.response.statusCode).toBeGreaterThanOrEqual(400);
      expect(result.calls).toEqual({ flaky: 1, healthy: 0 });
      expect(result.record).toMatchObject({
        status: 'failed',
        channel: 'sim-embed~0',
        channel_attempts: [{ channel: 'sim-embed~0', outcome: 'refused' }],
        bill: null,
      });
      expect(result.balance).toEqual({ balance: 10_000_000, held: 0, available: 10_000_000 });
    },
  );

  it.each([
    ['a timeout after sending', 'hang', 504],
    ['a dropped connection', 'drop', 502],
    ['a 200 whose body cannot be verified', 'garbage', 502],
  ] as const)(
    '%s never moves: submission_unknown, hold kept, second channel not called',
    async (_name, mode, status) => {
      flaky.mode = mode;
      const result = await send('sim-embed', { input: 'hello there' });
      expect(result.response.statusCode).toBe(status);
      expect(result.calls).toEqual({ flaky: 1, healthy: 0 });
      expect(result.record).toMatchObject({
        status: 'submission_unknown',
        channel: 'sim-embed~0',
        channel_attempts: [{ channel: 'sim-embed~0', outcome: 'maybe_processed' }],
      });
      const reserve = result.record['reserve'] as { amount: number; state: string };
      expect(reserve.state).toBe('open');
      expect(result.balance.held).toBe(reserve.amount);
    },
  );

  it('a stream refused before its first byte moves to the next channel; one charge', async () => {
    flaky.mode = 503;
    const result = await send(
      'sim-chat',
      { messages: [{ role: 'user', content: 'hello' }], stream: true },
      '/v1/chat/completions',
    );
    expect(result.response.statusCode).toBe(200);
    expect(result.response.body).toContain('[DONE]');
    expect(result.calls).toEqual({ flaky: 1, healthy: 1 });
    expect(result.record['channel']).toBe('sim-chat~1');
    expectOneCharge(result);
  });

  it('a stream cut after response bytes never moves: submission_unknown on the first channel', async () => {
    flaky.mode = 'pass';
    const result = await send(
      'sim-chat',
      { messages: [{ role: 'user', content: 'hello [sim:cut_after=2]' }], stream: true },
      '/v1/chat/completions',
    );
    expect(result.calls).toEqual({ flaky: 1, healthy: 0 });
    expect(result.record).toMatchObject({
      status: 'submission_unknown',
      channel: 'sim-chat~0',
      channel_attempts: [{ channel: 'sim-chat~0', outcome: 'succeeded' }],
    });
  });
});
