import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ConfigFile } from '../../src/config/schema.js';
import type { ChannelStatus } from '../../src/routing/channel-router.js';
import { seededRandom } from '../../src/routing/channel-selection.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const base = defaultConfig.models.find((model) => model.id === 'sim-chat');
if (base === undefined) throw new Error('no sim-chat');
const { upstream: _single, ...chat } = base;

/**
 * The risk: `max_concurrency` freed a channel's slot when a streamed answer started, so a
 * channel limited to N open streams carried many more (the upstream account's own limit then
 * refuses them, or bills a plan the operator did not want). A stream holds its slot until it
 * ends, however it ends (completed, or stalled after its caller went away: no leaked slot). A
 * caller that goes away does not end the stream (docs/chat.md): the slot stays taken while the
 * upstream is still read.
 */
describeEachDialect('a streamed chat holds its channel slot until it ends ($name)', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function start(): Promise<TestGateway> {
    const config: ConfigFile = testConfig({
      upstreams: {
        simulator: {
          kind: 'simulator',
          // The stalled stream ends by this idle timeout once its caller has gone.
          timeouts: { connect_ms: 1_000, first_byte_ms: 5_000, idle_ms: 2_500 },
        },
      },
      models: [
        {
          ...chat,
          channels: [
            {
              id: 'narrow',
              upstream: 'simulator',
              model: 'sim-chat',
              priority: 10,
              max_concurrency: 1,
            },
            { id: 'wide', upstream: 'simulator', model: 'sim-chat', priority: 0 },
          ],
        },
        {
          ...chat,
          id: 'sim-chat-single',
          channels: [{ id: 'only', upstream: 'simulator', model: 'sim-chat', max_concurrency: 1 }],
        },
      ],
    });
    return startGateway(dialect, { config, services: { random: seededRandom(3) } });
  }

  async function inFlight(gateway: TestGateway): Promise<Record<string, number>> {
    const list = await gateway.admin('GET', '/admin/v1/channels');
    return Object.fromEntries(
      (list['data'] as ChannelStatus[]).map((channel) => [channel.id, channel.in_flight]),
    );
  }

  /** Opens a stream that goes silent after one chunk, and reads that chunk. */
  async function openStalledStream(url: string, key: string, model: string) {
    const abort = new AbortController();
    const response = await fetch(`${url}/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'idempotency-key': randomUUID(),
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        model,
        stream: true,
        messages: [{ role: 'user', content: 'several words here [sim:stall_after=1]' }],
        max_tokens: 50,
      }),
      signal: abort.signal,
    });
    expect(response.status).toBe(200);
    await response.body?.getReader().read();
    return { abort, requestId: String(response.headers.get('x-service-request-id')) };
  }

  async function chatOnce(gateway: TestGateway, key: string, model: string, stream: boolean) {
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: { model, stream, messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 },
    });
    const id = String(response.headers['x-service-request-id']);
    return { response, record: await gateway.admin('GET', `/admin/v1/requests/${id}`) };
  }

  /**
   * The caller leaves mid-stream; the stalled upstream is still read until its idle timeout ends
   * it. Waits for its record to be written, then releases the hold if one is kept.
   */
  async function leave(gateway: TestGateway, open: { abort: AbortController; requestId: string }) {
    open.abort.abort();
    let status = 'processing';
    for (let attempt = 0; attempt < 300 && status === 'processing'; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 30));
      const record = await gateway.admin('GET', `/admin/v1/requests/${open.requestId}`);
      status = String(record['status']);
    }
    // Stalled after a chunk with no output: zero-completion insurance releases it (docs/billing.md).
    expect(status).toBe('failed');
  }

  it('while a stream is open its channel is full: the next request goes to another channel', async () => {
    gateway = await start();
    const { key } = await gateway.account(100_000_000);
    const url = await gateway.listen();
    const open = await openStalledStream(url, key, 'sim-chat');
    expect(await inFlight(gateway)).toMatchObject({ narrow: 1, wide: 0 });
    const during = await chatOnce(gateway, key, 'sim-chat', false);
    expect(during.response.statusCode).toBe(200);
    expect(during.record['channel']).toBe('wide');
    // The caller goes away mid-stream: the slot is freed, not leaked.
    await leave(gateway, open);
    expect(await inFlight(gateway)).toMatchObject({ narrow: 0, wide: 0 });
    const after = await chatOnce(gateway, key, 'sim-chat', true);
    expect(after.response.statusCode).toBe(200);
    expect(after.record).toMatchObject({ status: 'succeeded', channel: 'narrow' });
    // A stream that completed freed its slot too.
    expect(await inFlight(gateway)).toMatchObject({ narrow: 0, wide: 0 });
    expect((await chatOnce(gateway, key, 'sim-chat', false)).record['channel']).toBe('narrow');
  });

  it('with no other channel the second request is 503 MODEL_UNAVAILABLE, charged nothing', async () => {
    gateway = await start();
    const { accountId, key } = await gateway.account(100_000_000);
    const url = await gateway.listen();
    const open = await openStalledStream(url, key, 'sim-chat-single');
    const heldBefore = (await gateway.balance(accountId)).held;
    const refused = await chatOnce(gateway, key, 'sim-chat-single', true);
    expect(refused.response.statusCode).toBe(503);
    expect(refused.response.json()).toMatchObject({ error: { code: 'MODEL_UNAVAILABLE' } });
    expect(refused.record).toMatchObject({ status: 'failed', channel_attempts: [] });
    expect((await gateway.balance(accountId)).held).toBe(heldBefore);
    await leave(gateway, open);
    const after = await chatOnce(gateway, key, 'sim-chat-single', true);
    expect(after.response.statusCode).toBe(200);
    expect(after.record).toMatchObject({ status: 'succeeded', channel: 'only' });
  });
});
