import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { parseConfig } from '../../src/config/load.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

function defaultModel(id: string) {
  const base = defaultConfig.models.find((model) => model.id === id);
  if (base === undefined) throw new Error(`no ${id}`);
  const { upstream: _single, ...rest } = base;
  return rest;
}

// sim-chat bills 2 micro-yuan per input token and 8 per output token: a cost of half (cheap)
// or one and a half (dear) of each is exact, with no rounding to hide a wrong price.
const cheap = { input_per_million_tokens: 1_000_000, output_per_million_tokens: 4_000_000 };
const dear = { input_per_million_tokens: 3_000_000, output_per_million_tokens: 12_000_000 };

/**
 * The risk: a channel's price override leaks into what the caller is billed (callers pay more on
 * the dearer upstream), or the operator cannot see what each channel costs. The bill is the
 * model's on every channel; the record shows the serving channel's cost.
 */
describeEachDialect('per-channel cost ($name)', (dialect) => {
  let gateway: TestGateway;

  beforeAll(async () => {
    const config: ConfigFile = testConfig({
      models: [
        {
          ...defaultModel('sim-chat'),
          channels: [
            { id: 'chat-cheap', upstream: 'simulator', model: 'sim-chat', cost: cheap },
            { id: 'chat-dear', upstream: 'simulator', model: 'sim-chat', cost: dear },
          ],
        },
        {
          ...defaultModel('sim-embed'),
          channels: [
            {
              id: 'embed-priced',
              upstream: 'simulator',
              model: 'sim-embed',
              cost: { input_per_million_tokens: 7_000_000 },
            },
          ],
        },
      ],
    });
    gateway = await startGateway(dialect, { config });
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  /** Sends on `channel` only (the other one disabled), returns the operator's record. */
  async function chatOn(channel: 'chat-cheap' | 'chat-dear', key: string, stream: boolean) {
    const other = channel === 'chat-cheap' ? 'chat-dear' : 'chat-cheap';
    await gateway.admin('POST', `/admin/v1/channels/${other}/disable`);
    await gateway.admin('POST', `/admin/v1/channels/${channel}/enable`);
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: {
        model: 'sim-chat',
        stream,
        ...(stream ? { stream_options: { include_usage: true } } : {}),
        messages: [{ role: 'user', content: 'the same words on every channel' }],
        max_tokens: 30,
      },
    });
    expect(response.statusCode).toBe(200);
    const id = String(response.headers['x-service-request-id']);
    return gateway.admin('GET', `/admin/v1/requests/${id}`);
  }

  for (const stream of [false, true]) {
    it(`${stream ? 'a stream' : 'a chat'} is billed the model's price on both channels; each record shows its channel's cost`, async () => {
      const { accountId, key } = await gateway.account(100_000_000);
      const onCheap = await chatOn('chat-cheap', key, stream);
      const onDear = await chatOn('chat-dear', key, stream);
      const bill = (record: Record<string, unknown>) =>
        (record['bill'] as { amount: number }).amount;
      expect(onCheap).toMatchObject({ status: 'succeeded', channel: 'chat-cheap' });
      expect(onDear).toMatchObject({ status: 'succeeded', channel: 'chat-dear' });
      expect(bill(onCheap)).toBeGreaterThan(0);
      expect(bill(onDear)).toBe(bill(onCheap));
      expect(onCheap['channel_cost']).toBe(bill(onCheap) / 2);
      expect(onDear['channel_cost']).toBe((bill(onDear) * 3) / 2);
      expect(await gateway.balance(accountId)).toMatchObject({
        balance: 100_000_000 - 2 * bill(onCheap),
        held: 0,
      });
    });
  }

  it('embeddings record their channel cost; callers never see it', async () => {
    const { key } = await gateway.account(100_000_000);
    const response = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'a cost per channel' },
    });
    expect(response.statusCode).toBe(200);
    const id = String(response.headers['x-service-request-id']);
    const record = await gateway.admin('GET', `/admin/v1/requests/${id}`);
    const tokens = response.json<{ usage: { prompt_tokens: number } }>().usage.prompt_tokens;
    expect(record['channel_cost']).toBe(tokens * 7);
    const callerView = (await gateway.call('GET', `/v1/requests/${id}`, { key })).json();
    expect(callerView).not.toHaveProperty('channel_cost');
  });
});

describe('a channel cost in the configuration', () => {
  it('is refused at start-up when it lacks a price the model needs, naming the field', () => {
    const config = structuredClone(defaultConfig);
    const index = config.models.findIndex((model) => model.id === 'sim-embed');
    const raw = {
      ...config,
      models: config.models.map((model) =>
        model.id === 'sim-embed'
          ? {
              ...defaultModel('sim-embed'),
              channels: [{ upstream: 'simulator', cost: { per_second: { '320x240': 1 } } }],
            }
          : model,
      ),
    };
    expect(() => parseConfig(raw, 'tollgate.json')).toThrow(
      `models.${index}.channels.0.cost.input_per_million_tokens: required`,
    );
    expect(() => parseConfig(raw, 'tollgate.json')).toThrow(
      `models.${index}.channels.0.cost.per_second: only for models of family videos or h3`,
    );
  });
});
