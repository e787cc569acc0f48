import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { PriceBook } from '../../src/billing/price-book.js';
import { parseConfig } from '../../src/config/load.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

type ModelFile = ConfigFile['models'][number];

const imageModel: ModelFile = {
  id: 'img',
  upstream: 'simulator',
  families: ['images'],
  prices: { per_image: { '512x512': { standard: 20_000 } } },
};
const videoModel: ModelFile = {
  id: 'vid',
  upstream: 'simulator',
  families: ['videos'],
  prices: { per_second: { '640x360': 50_000 } },
};

/** The first line of the configuration error for `model`, or `valid`. */
function configError(model: ModelFile): string {
  try {
    parseConfig(testConfig({ models: [model] }), 'tollgate.json');
    return 'valid';
  } catch (error) {
    return (error as Error).message.split('\n')[1]?.trim() ?? '';
  }
}

/**
 * A price table that is wrong in the configuration file would quote wrong amounts from the
 * first start: each mistake stops the start with the field named.
 */
describe('task prices in the configuration file', () => {
  it('accepts image and video models priced per image and per second, without token prices', () => {
    expect(configError(imageModel)).toBe('valid');
    expect(configError(videoModel)).toBe('valid');
  });

  it('names the field of every mistake', () => {
    const cases: [ModelFile, string][] = [
      [
        { ...imageModel, prices: {} },
        'models.0.prices.per_image: required for a model of family images',
      ],
      [
        { ...videoModel, prices: {} },
        'models.0.prices.per_second: required for a model of family videos',
      ],
      [
        { ...imageModel, prices: { ...imageModel.prices, per_second: { '640x360': 1 } } },
        'models.0.prices.per_second: only for models of family videos or h3; img is images',
      ],
      [
        {
          id: 'chat',
          upstream: 'simulator',
          families: ['chat'],
          prices: { input_per_million_tokens: 1, per_image: { '512x512': { standard: 1 } } },
        },
        'models.0.prices.per_image: only for models of family images; chat is chat',
      ],
      [
        { ...imageModel, prices: { ...imageModel.prices, input_per_million_tokens: 5 } },
        'models.0.prices.input_per_million_tokens: is a token price; img (images) is billed per image or per second, not per token',
      ],
      [
        { ...imageModel, prices: { per_image: { '512x512': { standard: 1.5 } } } },
        'models.0.prices.per_image.512x512.standard: Invalid input: expected int, received number',
      ],
      [
        { ...imageModel, prices: { per_image: { '512x512': { standard: 10_000_000_000_001 } } } },
        'models.0.prices.per_image.512x512.standard: must be at most 10000000000000 micro-yuan (the largest single charge)',
      ],
      [
        { ...imageModel, prices: { per_image: { '512': { standard: 1 } } } },
        'models.0.prices.per_image.512: sizes are <width>x<height>, e.g. 1024x1024',
      ],
      [
        {
          ...videoModel,
          prices: {
            per_second: { '640x360': 50_000 },
            per_second_with_audio: { '640x360': 40_000 },
          },
        },
        'models.0.prices.per_second_with_audio.640x360: is 40000, below per_second 50000; the price with audio must be at least the price without',
      ],
      [
        { ...videoModel, generate_audio: true },
        'models.0.prices.per_second_with_audio: required when generate_audio is true',
      ],
      [
        { ...imageModel, max_reference_images: 2 },
        'models.0.prices.per_reference_image: required: max_reference_images allows 2 reference images and 0 are free',
      ],
      [
        { ...imageModel, image_sizes: ['512x512', '1024x1024'] },
        'models.0.image_sizes.1: 1024x1024 has no per_image price',
      ],
      [
        { ...imageModel, image_qualities: ['hd'] },
        'models.0.image_qualities.0: hd has no per_image price for any offered size',
      ],
      [
        { ...videoModel, video_sizes: ['1280x720'] },
        'models.0.video_sizes.0: 1280x720 has no per_second price',
      ],
      [
        { ...videoModel, video_seconds: [] },
        'models.0.video_seconds: Too small: expected array to have >=1 items',
      ],
    ];
    for (const [model, expected] of cases) expect(configError(model), expected).toBe(expected);
  });

  it('lets free reference images stand in for a reference price', () => {
    expect(
      configError({
        ...imageModel,
        max_reference_images: 2,
        prices: { ...imageModel.prices, free_reference_images: 2 },
      }),
    ).toBe('valid');
  });
});

describeEachDialect('task prices in the price book and the model list on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  const putPrices = (model: string, payload: object): Promise<LightMyRequestResponse> => {
    if (gateway === undefined) throw new Error('no gateway');
    return gateway.app.inject({
      method: 'PUT',
      url: `/admin/v1/models/${model}/prices`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload,
    });
  };
  const versions = async (model: string) =>
    (
      (await gateway?.admin('GET', `/admin/v1/models/${model}/prices`))?.['data'] as {
        price_version: string;
      }[]
    ).map((entry) => entry.price_version);
  function expectRefused(response: LightMyRequestResponse, param: string, message: RegExp): void {
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toEqual({
      error: {
        code: 'INVALID_INPUT',
        message: expect.stringMatching(message),
        request_id: expect.stringMatching(/^req_/),
        param,
      },
    });
  }

  it('adds a price version for an image model priced per image, and serves it uncached', async () => {
    gateway = await startGateway(dialect);
    const otherInstance = new PriceBook(
      gateway.services.store.db,
      { now: () => Date.now() },
      gateway.services.catalog.models,
      60_000,
    );
    expect((await otherInstance.currentFor('sim-image')).priceVersion).toBe('sim-image@1');

    const newPrices = {
      per_image: { '256x256': { standard: 15_000 }, '1024x1024': { standard: 50_000, hd: 90_000 } },
      per_reference_image: 6_000,
      free_reference_images: 1,
    };
    const changed = await putPrices('sim-image', newPrices);
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({
      model: 'sim-image',
      price_version: 'sim-image@2',
      prices: newPrices,
    });
    expect(await versions('sim-image')).toEqual(['sim-image@2', 'sim-image@1']);

    // Another instance still trusts its cache for quotes and lists, but the read task creation
    // uses goes to the database, so an `expected_price_version` of @1 is judged stale there too.
    expect((await otherInstance.currentFor('sim-image')).priceVersion).toBe('sim-image@1');
    const uncached = await otherInstance.currentUncached('sim-image');
    expect(uncached.priceVersion).toBe('sim-image@2');
    expect(uncached.prices).toEqual(newPrices);
    expect((await otherInstance.currentFor('sim-image')).priceVersion).toBe('sim-image@2');
  });

  it('refuses a zero task price without "free": true, naming the amount', async () => {
    gateway = await startGateway(dialect);
    expectRefused(
      await putPrices('sim-image', {
        per_image: { '256x256': { standard: 10, hd: 0 } },
        per_reference_image: 5,
      }),
      'per_image.256x256.hd',
      /per_image\.256x256\.hd: is 0, which makes it free of charge; send "free": true/,
    );
    expectRefused(
      await putPrices('sim-video', { per_second: { '320x240': 0 }, per_reference_image: 1 }),
      'per_second.320x240',
      /is 0/,
    );
    expectRefused(
      await putPrices('sim-video', { per_second: { '320x240': 5 }, per_reference_image: 0 }),
      'per_reference_image',
      /is 0/,
    );
    expect(await versions('sim-image')).toEqual(['sim-image@1']);
    expect(await versions('sim-video')).toEqual(['sim-video@1']);
    const free = await putPrices('sim-video', {
      per_second: { '320x240': 0 },
      per_reference_image: 0,
      free: true,
    });
    expect(free.statusCode, free.body).toBe(200);
    expect(await versions('sim-video')).toEqual(['sim-video@2', 'sim-video@1']);
  });

  it('refuses task prices that do not fit the model, naming the field, and adds no version', async () => {
    gateway = await startGateway(dialect);
    const valid = { per_image: { '256x256': { standard: 10_000 } }, per_reference_image: 1 };
    expectRefused(
      await putPrices('sim-image', {}),
      'per_image',
      /required for a model of family images/,
    );
    expectRefused(
      await putPrices('sim-image', { ...valid, per_second: { '320x240': 1 } }),
      'per_second',
      /only for models of family videos or h3; sim-image is images/,
    );
    expectRefused(
      await putPrices('sim-video', { per_second: { '320x240': 1 }, per_image: valid.per_image }),
      'per_image',
      /only for models of family images/,
    );
    expectRefused(
      await putPrices('sim-embed', { input_per_million_tokens: 1, per_reference_image: 1 }),
      'per_reference_image',
      /only for models of family images, videos or h3/,
    );
    expectRefused(
      await putPrices('sim-image', { per_image: { '256x256': { standard: 10_000_000_000_001 } } }),
      'per_image.256x256.standard',
      /at most 10000000000000 micro-yuan/,
    );
    expectRefused(
      await putPrices('sim-image', { per_image: { '256x256': { standard: 2.5 } } }),
      'per_image.256x256.standard',
      /int/,
    );
    expectRefused(
      await putPrices('sim-image', { per_image: { huge: { standard: 1 } } }),
      'per_image.huge',
      /<width>x<height>/,
    );
    expectRefused(
      await putPrices('sim-image', { per_image: { '256x256': {} } }),
      'per_image.256x256',
      /at least one quality/,
    );
    // sim-image takes up to 4 reference images, 1 free: the other 3 need a price.
    expectRefused(
      await putPrices('sim-image', { per_image: valid.per_image }),
      'per_reference_image',
      /max_reference_images allows 4 reference images and 0 are free/,
    );
    expectRefused(
      await putPrices('sim-video', {
        per_second: { '320x240': 10 },
        per_second_with_audio: { '320x240': 9, '640x360': 20 },
        per_reference_image: 1,
      }),
      'per_second_with_audio.320x240',
      /below per_second 10/,
    );
    expectRefused(
      await putPrices('sim-image', { ...valid, per_images: {} }),
      'per_images',
      /not a known price field/,
    );
    expect(await versions('sim-image')).toEqual(['sim-image@1']);
    expect(await versions('sim-video')).toEqual(['sim-video@1']);
    expect(await versions('sim-embed')).toEqual(['sim-embed@1']);
  });

  it('lists sim-image and sim-video with their task prices, units and what may be asked', async () => {
    gateway = await startGateway(dialect);
    const { key } = await gateway.account(0);
    const list = (await gateway.call('GET', '/v1/models', { key })).json<{
      data: { id: string; pricing: unknown; capabilities: unknown }[];
    }>();
    const entry = (id: string) => list.data.find((model) => model.id === id);
    expect(entry('sim-image')?.pricing).toEqual({
      currency: 'CNY_MICRO',
      price_version: 'sim-image@1',
      units: {
        per_image: 'per_image',
        per_reference_image: 'per_image',
        free_reference_images: 'count',
      },
      per_image: {
        '256x256': { standard: 10_000, hd: 20_000 },
        '512x512': { standard: 20_000, hd: 40_000 },
        '1024x1024': { standard: 40_000, hd: 80_000 },
      },
      per_reference_image: 5_000,
      free_reference_images: 1,
    });
    expect(entry('sim-image')?.capabilities).toEqual({
      families: ['images'],
      images: {
        sizes: ['256x256', '512x512', '1024x1024'],
        qualities: ['standard', 'hd'],
        max_images: 4,
        max_reference_images: 4,
      },
    });
    expect(entry('sim-video')?.pricing).toEqual({
      currency: 'CNY_MICRO',
      price_version: 'sim-video@1',
      units: {
        per_second: 'per_second',
        per_second_with_audio: 'per_second',
        per_reference_image: 'per_image',
      },
      per_second: { '320x240': 20_000, '640x360': 50_000, '1280x720': 100_000 },
      per_second_with_audio: { '320x240': 30_000, '640x360': 70_000, '1280x720': 140_000 },
      per_reference_image: 10_000,
    });
    expect(entry('sim-video')?.capabilities).toEqual({
      families: ['videos'],
      videos: {
        sizes: ['640x360', '320x240', '1280x720'],
        seconds: [1, 2, 4, 8],
        generate_audio: true,
        max_reference_images: 4,
      },
    });
    // Token models keep the entry existing clients read.
    expect(entry('sim-embed')?.pricing).toEqual({
      currency: 'CNY_MICRO',
      unit: 'per_million_tokens',
      price_version: 'sim-embed@1',
      input_per_million_tokens: 500_000,
    });
  });

  it('adds no price version at a restart with the same configuration', async () => {
    gateway = await startGateway(dialect);
    await gateway.services.prices.seedMissing();
    for (const model of ['sim-image', 'sim-video', 'sim-chat', 'sim-embed'])
      expect(await versions(model), model).toEqual([`${model}@1`]);
  });
});
