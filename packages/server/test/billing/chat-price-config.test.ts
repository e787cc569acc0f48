import { readFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { parseConfig } from '../../src/config/load.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { dialects } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/**
 * Risk: a price list that cannot mean what its author thinks — tiers out of order (which one
 * applies?), a tier inside a tier, a fee of 0, a price of 0 hidden in a tier, tiers on a model
 * no chat request ever prices — taken silently and billed some other way; or an existing
 * configuration whose prices change meaning (a new default would make every stored price version
 * differ from the file). Each refusal names the field as a dotted path, in the configuration
 * file and in an admin price change alike.
 */

const SIM_CHAT = defaultConfig.models.find((model) => model.id === 'sim-chat');
if (SIM_CHAT === undefined) throw new Error('no sim-chat');
const { upstream: _upstream, ...simChat } = SIM_CHAT;

/** The default configuration with sim-chat's prices (model 0) replaced. */
function withPrices(prices: unknown, extra: Record<string, unknown> = {}): ConfigFile {
  return testConfig({
    models: [
      { ...simChat, upstream: 'simulator', prices, ...extra } as ConfigFile['models'][number],
    ],
  });
}

const BASE = { input_per_million_tokens: 21_600_000, output_per_million_tokens: 108_000_000 };
const tier = (above: number, prices: object = { input_per_million_tokens: 43_200_000 }) => ({
  above_input_tokens: above,
  prices,
});

describe('chat prices in the configuration file', () => {
  it('takes cache-write prices, tiers, a per-request fee and service tiers', () => {
    const prices = {
      ...BASE,
      cached_input_per_million_tokens: 2_160_000,
      cache_write_per_million_tokens: 27_000_000,
      cache_write_1h_per_million_tokens: 43_200_000,
      tiers: [tier(200_000), tier(1_000_000, { output_per_million_tokens: 200_000_000 })],
      per_request: 1_000,
      service_tiers: {
        flex: { input_per_million_tokens: 10_800_000 },
        priority: { output_per_million_tokens: 216_000_000, tiers: [tier(200_000)] },
      },
    };
    const config = parseConfig(withPrices(prices), 'tollgate.json');
    expect(config.models[0]?.prices).toEqual(prices);
  });

  it("leaves an existing model's prices as written: no default is added, so no new price version", () => {
    const config = parseConfig(testConfig(), 'tollgate.json');
    for (const model of defaultConfig.models)
      expect(config.models.find((parsed) => parsed.id === model.id)?.prices).toEqual(model.prices);
  });

  it('takes the Anthropic example with its cache-write prices and long-context tier', () => {
    const example = JSON.parse(
      readFileSync(new URL('../../../../examples/config/anthropic.json', import.meta.url), 'utf8'),
    ) as ConfigFile;
    const parsed = parseConfig(example, 'examples/config/anthropic.json');
    // Claude Sonnet 4.5 at 7.2 yuan per dollar: writes 1.25x (5 minutes) and 2x (1 hour) the
    // input price; above 200,000 input tokens the long-context prices, twice the input price.
    expect(parsed.models[0]?.prices).toMatchObject({
      input_per_million_tokens: 21_600_000,
      cache_write_per_million_tokens: 27_000_000,
      cache_write_1h_per_million_tokens: 43_200_000,
      tiers: [{ above_input_tokens: 200_000, prices: { input_per_million_tokens: 43_200_000 } }],
    });
  });

  it.each([
    [
      'a tier not above the one before',
      { ...BASE, tiers: [tier(200_000), tier(200_000)] },
      "models.0.prices.tiers.1.above_input_tokens: must be above the previous tier's 200000: tiers ascend strictly",
    ],
    [
      'tiers out of order',
      { ...BASE, tiers: [tier(200_000), tier(100_000), tier(300_000)] },
      "models.0.prices.tiers.1.above_input_tokens: must be above the previous tier's 200000",
    ],
    [
      'a threshold of 0',
      { ...BASE, tiers: [tier(0)] },
      'models.0.prices.tiers.0.above_input_tokens: ',
    ],
    [
      'a threshold that is not an integer',
      { ...BASE, tiers: [tier(1.5)] },
      'models.0.prices.tiers.0.above_input_tokens: ',
    ],
    [
      'a tier inside a tier',
      { ...BASE, tiers: [tier(10, { tiers: [tier(20)] })] },
      'models.0.prices.tiers.0.prices: Unrecognized key: "tiers"',
    ],
    [
      'a fee inside a tier',
      { ...BASE, tiers: [tier(10, { per_request: 5 })] },
      'models.0.prices.tiers.0.prices: Unrecognized key: "per_request"',
    ],
    [
      'a field of its own on a tier',
      { ...BASE, tiers: [{ ...tier(10), below_input_tokens: 5 }] },
      'models.0.prices.tiers.0: Unrecognized key: "below_input_tokens"',
    ],
    [
      'an empty list of tiers',
      { ...BASE, tiers: [] },
      'models.0.prices.tiers: give at least one tier',
    ],
    [
      'nine tiers',
      { ...BASE, tiers: Array.from({ length: 9 }, (_, index) => tier(1_000 * (index + 1))) },
      'models.0.prices.tiers: at most 8 tiers',
    ],
    [
      'a price of 0 in a tier',
      { ...BASE, tiers: [tier(10, { output_per_million_tokens: 0 })] },
      'models.0.prices.tiers.0.prices.output_per_million_tokens: is 0, which makes it free of charge',
    ],
    [
      'a price of 0 in a service tier',
      { ...BASE, service_tiers: { flex: { input_per_million_tokens: 0 } } },
      'models.0.prices.service_tiers.flex.input_per_million_tokens: is 0, which makes it free of charge',
    ],
    [
      'a per-request fee of 0',
      { ...BASE, per_request: 0 },
      'models.0.prices.per_request: must be at least 1; leave per_request out for no fee',
    ],
    [
      'a service tier spelled as no upstream does',
      { ...BASE, service_tiers: { 'Flex!': { input_per_million_tokens: 1 } } },
      'models.0.prices.service_tiers.Flex!: service tiers are 1-32 of a-z 0-9 _ -',
    ],
    [
      'a tier in a service tier out of order',
      { ...BASE, service_tiers: { priority: { tiers: [tier(20), tier(10)] } } },
      "models.0.prices.service_tiers.priority.tiers.1.above_input_tokens: must be above the previous tier's 20",
    ],
  ])('refuses %s, naming the field', (_name, prices, message) => {
    expect(() => parseConfig(withPrices(prices), 'tollgate.json')).toThrow(message);
  });

  it('refuses tiers, fees and service tiers on a model no chat request prices', () => {
    const config = testConfig({
      models: [
        {
          id: 'emb',
          upstream: 'simulator',
          families: ['embeddings'],
          prices: { input_per_million_tokens: 1, tiers: [tier(10)] },
        },
      ],
    });
    expect(() => parseConfig(config, 'tollgate.json')).toThrow(
      'models.0.prices.tiers: only for models of family chat or ocr; emb is embeddings',
    );
  });

  it('takes a price of 0 in a tier with "free": true on the model', () => {
    const prices = { ...BASE, tiers: [tier(10, { output_per_million_tokens: 0 })] };
    expect(() => parseConfig(withPrices(prices, { free: true }), 'tollgate.json')).not.toThrow();
  });
});

describe('chat prices in an admin price change', () => {
  const [sqlite] = dialects;
  let gateway: TestGateway;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('SQLite always runs');
    gateway = await startGateway(sqlite);
  });
  afterAll(async () => {
    await gateway.close();
  });
  const put = (model: string, payload: object) =>
    gateway.app.inject({
      method: 'PUT',
      url: `/admin/v1/models/${model}/prices`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload,
    });
  const expectRefused = (response: LightMyRequestResponse, param: string, message: string) => {
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toMatchObject({
      error: { code: 'INVALID_INPUT', param, message: expect.stringContaining(message) as unknown },
    });
  };

  it('refuses a bad tier, naming it, and adds no version', async () => {
    const before = await gateway.admin('GET', '/admin/v1/models/sim-chat/prices');
    expectRefused(
      await put('sim-chat', { ...BASE, tiers: [tier(200_000), tier(100_000)] }),
      'tiers.1.above_input_tokens',
      'tiers ascend strictly',
    );
    expectRefused(
      await put('sim-chat', { ...BASE, tiers: [tier(10, { output_per_million_tokens: 0 })] }),
      'tiers.0.prices.output_per_million_tokens',
      'free of charge',
    );
    expectRefused(
      await put('sim-embed', { input_per_million_tokens: 5, tiers: [tier(10)] }),
      'tiers',
      'only for models of family chat or ocr; sim-embed is embeddings',
    );
    expect(await gateway.admin('GET', '/admin/v1/models/sim-chat/prices')).toEqual(before);
  });

  it('takes tiers and cache-write prices, and GET /v1/models shows them', async () => {
    const prices = {
      ...BASE,
      cache_write_per_million_tokens: 27_000_000,
      tiers: [tier(200_000)],
      per_request: 1_000,
    };
    const response = await put('sim-chat', prices);
    expect(response.statusCode, response.body).toBe(200);
    const { key } = await gateway.account(0);
    const models = (await gateway.call('GET', '/v1/models', { key })).json<{
      data: { id: string; pricing: object }[];
    }>();
    expect(models.data.find((model) => model.id === 'sim-chat')?.pricing).toMatchObject(prices);
  });
});
