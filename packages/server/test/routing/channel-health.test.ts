import { afterEach, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ConfigFile } from '../../src/config/schema.js';
import type { ChannelStatus } from '../../src/routing/channel-router.js';
import type { ServiceOptions } from '../../src/services.js';
import { seededRandom } from '../../src/routing/channel-selection.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { describeEachDialect, type TestDialect } from '../helpers/dialects.js';
import { startFaultFront, type FaultFront } from '../helpers/fault-front.js';
import {
  ADMIN_TOKEN,
  manualClock,
  startGateway,
  testConfig,
  type TestGateway,
} from '../helpers/gateway.js';
import type { Clock } from '../../src/util/effects.js';

interface Rig {
  gateway: TestGateway;
  first: FaultFront;
  second: FaultFront;
  simulator: Simulator;
}

/** `sim-embed` on two upstream accounts (channels `first` and `second`) in front of one simulator. */
async function startRig(
  dialect: TestDialect,
  priorities: { first: number; second: number },
  options: { clock?: Clock; services?: Partial<ServiceOptions> } = {},
): Promise<Rig> {
  const simulator = await startSimulator();
  const first = await startFaultFront(simulator.url);
  const second = await startFaultFront(simulator.url);
  const base = defaultConfig.models.find((model) => model.id === 'sim-embed');
  if (base === undefined) throw new Error('no sim-embed');
  const { upstream: _single, ...embed } = base;
  const config: ConfigFile = testConfig({
    upstreams: {
      one: { kind: 'openai', base_url: first.url },
      two: { kind: 'openai', base_url: second.url },
    },
    models: [
      {
        ...embed,
        channels: [
          { id: 'first', upstream: 'one', model: 'sim-embed', priority: priorities.first },
          { id: 'second', upstream: 'two', model: 'sim-embed', priority: priorities.second },
        ],
      },
    ],
  });
  const gateway = await startGateway(dialect, {
    config,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    services: { random: seededRandom(5), ...options.services },
  });
  return { gateway, first, second, simulator };
}

describeEachDialect('channel health on $name', (dialect) => {
  let rig: Rig | undefined;
  afterEach(async () => {
    if (rig === undefined) return;
    await rig.gateway.expectLedgerClean();
    await rig.gateway.close();
    await rig.first.close();
    await rig.second.close();
    await rig.simulator.close();
    rig = undefined;
  });

  async function embed(gateway: TestGateway, key: string) {
    const response = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'hello channels' },
    });
    const id = String(response.headers['x-service-request-id']);
    return { response, record: await gateway.admin('GET', `/admin/v1/requests/${id}`) };
  }

  async function channelList(gateway: TestGateway) {
    const list = await gateway.admin('GET', '/admin/v1/channels');
    return Object.fromEntries(
      (list['data'] as ChannelStatus[]).map((channel) => [channel.id, channel]),
    );
  }

  it('two channels behind one model, one failing, serve every request with one charge each', async () => {
    rig = await startRig(dialect, { first: 0, second: 0 });
    rig.first.mode = 503;
    const { accountId, key } = await rig.gateway.account(10_000_000);
    let billed = 0;
    for (let request = 0; request < 30; request += 1) {
      const { response, record } = await embed(rig.gateway, key);
      expect(response.statusCode).toBe(200);
      expect(record).toMatchObject({ status: 'succeeded', channel: 'second' });
      billed += (record['bill'] as { amount: number }).amount;
    }
    expect(billed).toBeGreaterThan(0);
    expect(rig.second.calls).toBe(30);
    // The failing channel was tried (equal priority) until its breaker opened (5 failures).
    expect(rig.first.calls).toBeGreaterThan(0);
    expect(rig.first.calls).toBeLessThanOrEqual(5);
    expect(await rig.gateway.balance(accountId)).toEqual({
      balance: 10_000_000 - billed,
      held: 0,
      available: 10_000_000 - billed,
    });
  });

  it('the breaker opens after consecutive certain failures, cools down, and a probe closes it', async () => {
    const clock = manualClock();
    rig = await startRig(
      dialect,
      { first: 10, second: 0 },
      {
        clock,
        services: { breaker: { failureThreshold: 2, cooldownMs: 60_000, maxCooldownMs: 600_000 } },
      },
    );
    rig.first.mode = 503;
    const { key } = await rig.gateway.account(10_000_000);
    await embed(rig.gateway, key);
    await embed(rig.gateway, key);
    expect(rig.first.calls).toBe(2);
    expect((await channelList(rig.gateway))['first']).toMatchObject({ breaker: 'open' });
    // Open: skipped without a call; the request is served by the other channel.
    const skipped = await embed(rig.gateway, key);
    expect(skipped.response.statusCode).toBe(200);
    expect(skipped.record['channel_attempts']).toEqual([
      { channel: 'second', upstream: 'two', outcome: 'succeeded', detail: null },
    ]);
    expect(rig.first.calls).toBe(2);
    clock.advance(60_000);
    expect((await channelList(rig.gateway))['first']).toMatchObject({ breaker: 'half_open' });
    rig.first.mode = 'pass';
    const probe = await embed(rig.gateway, key);
    expect(probe.record['channel']).toBe('first');
    expect(rig.first.calls).toBe(3);
    expect((await channelList(rig.gateway))['first']).toMatchObject({
      breaker: 'closed',
      consecutive_failures: 0,
    });
  });

  it('an operator disables a channel (skipped by requests) and enables it again', async () => {
    rig = await startRig(dialect, { first: 10, second: 0 });
    const { accountId, key } = await rig.gateway.account(10_000_000);
    const disabled = await rig.gateway.admin('POST', '/admin/v1/channels/first/disable', {
      reason: 'provider maintenance',
    });
    expect(disabled).toMatchObject({ id: 'first', disabled: true });
    expect((await embed(rig.gateway, key)).record['channel']).toBe('second');
    expect(rig.first.calls).toBe(0);
    // Every channel disabled: refused unsent, nothing held or charged.
    await rig.gateway.admin('POST', '/admin/v1/channels/second/disable');
    const refused = await embed(rig.gateway, key);
    expect(refused.response.statusCode).toBe(503);
    expect(refused.response.json()).toMatchObject({ error: { code: 'MODEL_UNAVAILABLE' } });
    expect(refused.record).toMatchObject({ status: 'failed', channel: null, channel_attempts: [] });
    await rig.gateway.admin('POST', '/admin/v1/channels/first/enable');
    await rig.gateway.admin('POST', '/admin/v1/channels/second/enable');
    expect((await embed(rig.gateway, key)).record['channel']).toBe('first');
    expect(rig.first.calls).toBe(1);
    const balance = await rig.gateway.balance(accountId);
    expect(balance.held).toBe(0);
  });

  it('an unknown channel is a 404 and a bad reason a 400 naming the field; nothing changes', async () => {
    rig = await startRig(dialect, { first: 10, second: 0 });
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const unknown = await rig.gateway.app.inject({
      method: 'POST',
      url: '/admin/v1/channels/nope/disable',
      headers,
    });
    expect(unknown.statusCode).toBe(404);
    const bad = await rig.gateway.app.inject({
      method: 'POST',
      url: '/admin/v1/channels/first/disable',
      headers,
      payload: { reason: 42 },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'reason' } });
    expect((await channelList(rig.gateway))['first']).toMatchObject({ disabled: false });
  });
});
