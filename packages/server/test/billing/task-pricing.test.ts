import { MAX_MOVEMENT_MICRO_YUAN } from '@tollgate/protocol';
import { describe, expect, it } from 'vitest';
import {
  actualImage,
  actualVideo,
  QUOTE_TOO_LARGE,
  quoteImage,
  quoteVideo,
  roundUpSeconds,
} from '../../src/billing/task-pricing.js';
import { defaultConfig } from '../../src/config/default-config.js';
import { parseConfig } from '../../src/config/load.js';
import type { ModelConfig, ModelPrices } from '../../src/config/schema.js';

const config = parseConfig(defaultConfig, 'test');
const model = (id: string): ModelConfig => {
  const found = config.models.find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`no ${id} in the default config`);
  return found;
};
const simImage = model('sim-image');
const simVideo = model('sim-video');

describe('image quotes show what is charged, line by line', () => {
  it('prices n images at the size and quality, and reference images beyond the free one', () => {
    const quote = quoteImage(simImage, simImage.prices, {
      n: 2,
      size: '1024x1024',
      quality: 'hd',
      referenceImages: 3,
    });
    expect(quote.closedReasons).toEqual([]);
    expect(quote.lineItems).toEqual([
      { name: 'image', quantity: 2, unit_price: 80_000, amount: 160_000, detail: '1024x1024 hd' },
      {
        name: 'reference_image',
        quantity: 3,
        free_quantity: 1,
        unit_price: 5_000,
        amount: 10_000,
        detail: 'first 1 free',
      },
    ]);
    expect(quote.quotedAmount).toBe(170_000);
  });

  it('charges nothing for reference images within the free allowance, and says so', () => {
    const quote = quoteImage(simImage, simImage.prices, {
      n: 1,
      size: '256x256',
      quality: 'standard',
      referenceImages: 1,
    });
    expect(quote.lineItems[1]).toEqual({
      name: 'reference_image',
      quantity: 1,
      free_quantity: 1,
      unit_price: 5_000,
      amount: 0,
      detail: 'first 1 free',
    });
    expect(quote.quotedAmount).toBe(10_000);
  });

  it('fills in the defaults it priced: one image, the smallest size, the first quality', () => {
    const quote = quoteImage(simImage, simImage.prices, { referenceImages: 0 });
    expect(quote.input).toEqual({ n: 1, size: '256x256', quality: 'standard', referenceImages: 0 });
    expect(quote.quotedAmount).toBe(10_000);
    expect(quote.lineItems).toHaveLength(1);
  });

  it('names every reason a combination is closed, and confirms no amount', () => {
    const quote = quoteImage(simImage, simImage.prices, {
      n: 5,
      size: '999x999',
      quality: 'standard',
      referenceImages: 5,
    });
    expect(quote.quotedAmount).toBeNull();
    expect(quote.closedReasons).toEqual([
      'n 5 is above the most sim-image makes at once (4)',
      'size 999x999 is not offered by sim-image; offered: 256x256, 512x512, 1024x1024',
      '5 reference images given; sim-image takes at most 4',
    ]);
    const badQuality = quoteImage(simImage, simImage.prices, {
      size: '512x512',
      quality: 'ultra',
      referenceImages: 0,
    });
    expect(badQuality.closedReasons).toEqual([
      'quality ultra is not offered by sim-image at 512x512; offered: standard, hd',
    ]);
    expect(badQuality.quotedAmount).toBeNull();
    for (const n of [0, 1.5, Number.NaN]) {
      const quote = quoteImage(simImage, simImage.prices, { n, referenceImages: 0 });
      expect(quote.quotedAmount, String(n)).toBeNull();
      expect(quote.closedReasons[0], String(n)).toMatch(/^n must be a whole number/);
    }
  });

  it('closes a size whose price an operator removed, even if the configuration offers it', () => {
    const narrowed: ModelPrices = { per_image: { '256x256': { standard: 10_000 } } };
    const configured: ModelConfig = { ...simImage, image_sizes: ['256x256', '512x512'] };
    const quote = quoteImage(configured, narrowed, {
      size: '512x512',
      quality: 'standard',
      referenceImages: 0,
    });
    expect(quote.quotedAmount).toBeNull();
    expect(quote.closedReasons).toEqual([
      'quality standard is not offered by sim-image at 512x512; offered: none',
    ]);
  });

  it('closes reference images on a model that takes none', () => {
    const noReferences: ModelConfig = { ...simImage, max_reference_images: 0 };
    const quote = quoteImage(noReferences, simImage.prices, { referenceImages: 1 });
    expect(quote.closedReasons).toEqual(['sim-image takes no reference images (1 given)']);
    expect(quote.quotedAmount).toBeNull();
  });
});

describe('video quotes', () => {
  it('prices seconds at the size, with the audio price only when audio is asked', () => {
    const withAudio = quoteVideo(simVideo, simVideo.prices, {
      seconds: 4,
      size: '640x360',
      generateAudio: true,
      referenceImages: 2,
    });
    expect(withAudio.closedReasons).toEqual([]);
    expect(withAudio.lineItems).toEqual([
      {
        name: 'video_second',
        quantity: 4,
        unit_price: 70_000,
        amount: 280_000,
        detail: '640x360 with audio',
      },
      {
        name: 'reference_image',
        quantity: 2,
        free_quantity: 0,
        unit_price: 10_000,
        amount: 20_000,
        detail: 'none free',
      },
    ]);
    expect(withAudio.quotedAmount).toBe(300_000);
    const silent = quoteVideo(simVideo, simVideo.prices, {
      seconds: 4,
      size: '640x360',
      referenceImages: 0,
    });
    expect(silent.quotedAmount).toBe(200_000);
    expect(silent.input.generateAudio).toBe(false);
  });

  it('defaults to the first configured size and seconds', () => {
    const quote = quoteVideo(simVideo, simVideo.prices, { referenceImages: 0 });
    expect(quote.input).toEqual({
      seconds: 1,
      size: '640x360',
      generateAudio: false,
      referenceImages: 0,
    });
    expect(quote.quotedAmount).toBe(50_000);
  });

  it('names seconds, size and audio that are not offered', () => {
    const silentOnly: ModelConfig = { ...simVideo, generate_audio: false };
    const quote = quoteVideo(silentOnly, simVideo.prices, {
      seconds: 3,
      size: '1920x1080',
      generateAudio: true,
      referenceImages: 0,
    });
    expect(quote.quotedAmount).toBeNull();
    expect(quote.closedReasons).toEqual([
      'seconds 3 is not offered by sim-video; offered: 1, 2, 4, 8',
      'generate_audio is not offered by sim-video',
      'size 1920x1080 is not offered by sim-video; offered: 640x360, 320x240, 1280x720',
    ]);
    const noAudioPrice = quoteVideo(
      simVideo,
      { per_second: { '640x360': 50_000 }, per_reference_image: 1 },
      { seconds: 4, size: '640x360', generateAudio: true, referenceImages: 0 },
    );
    expect(noAudioPrice.closedReasons).toEqual(['sim-video has no price for 640x360 with audio']);
  });
});

describe('a quote never confirms more than one movement may charge', () => {
  const dear: ModelPrices = { per_image: { '256x256': { standard: MAX_MOVEMENT_MICRO_YUAN } } };
  const wide: ModelConfig = { ...simImage, max_images: 100, max_reference_images: 0 };

  it('confirms exactly the largest single charge', () => {
    const quote = quoteImage(wide, dear, { n: 1, referenceImages: 0 });
    expect(quote.quotedAmount).toBe(MAX_MOVEMENT_MICRO_YUAN);
  });

  it('closes one micro-yuan above it, and far above 2^53', () => {
    const plusOne = quoteImage(
      { ...wide, max_reference_images: 1 },
      { per_image: dear.per_image, per_reference_image: 1 },
      { n: 1, referenceImages: 1 },
    );
    expect(plusOne.quotedAmount).toBeNull();
    expect(plusOne.closedReasons).toEqual([QUOTE_TOO_LARGE]);
    const huge = quoteImage(wide, dear, { n: 100, referenceImages: 0 });
    expect(huge.quotedAmount).toBeNull();
    expect(huge.closedReasons).toEqual([
      'the quote exceeds the largest single charge (10000000000000 micro-yuan)',
    ]);
    const longVideo = quoteVideo(
      { ...simVideo, video_seconds: [3_600] },
      { per_second: { '640x360': MAX_MOVEMENT_MICRO_YUAN } },
      { seconds: 3_600, size: '640x360', referenceImages: 0 },
    );
    expect(longVideo.quotedAmount).toBeNull();
    expect(longVideo.closedReasons).toEqual([QUOTE_TOO_LARGE]);
  });
});

describe('the actual amount follows what the upstream delivered', () => {
  const imageInput = { n: 3, size: '512x512', quality: 'hd', referenceImages: 2 };

  it('bills the images delivered, not the images asked', () => {
    const actual = actualImage(simImage.prices, imageInput, { imagesDelivered: 2 });
    expect(actual.amount).toBe(2 * 40_000 + 5_000);
    expect(actual.lineItems.map((item) => [item.name, item.quantity, item.amount])).toEqual([
      ['image', 2, 80_000],
      ['reference_image', 2, 5_000],
    ]);
    expect(actual.rule).toBe(
      'image: 2 delivered: image 2 x 40000 = 80000 + reference_image 1 x 5000 = 5000 = 85000 micro-yuan',
    );
    expect(actual.reportExceededRequest).toBe(false);
  });

  it('bills nothing, reference images included, when nothing was delivered', () => {
    const actual = actualImage(simImage.prices, imageInput, { imagesDelivered: 0 });
    expect(actual).toMatchObject({ amount: 0, lineItems: [] });
    expect(actual.rule).toBe('image: 0 delivered: nothing billed');
    const video = actualVideo(
      simVideo.prices,
      { seconds: 4, size: '640x360', generateAudio: false, referenceImages: 1 },
      { secondsDelivered: 0, audio: false },
    );
    expect(video.amount).toBe(0);
  });

  it('bills a failure the upstream billed, like a delivery', () => {
    const actual = actualImage(simImage.prices, imageInput, {
      imagesDelivered: 0,
      billedFailure: { images: 1 },
    });
    expect(actual.amount).toBe(40_000 + 5_000);
    expect(actual.rule).toMatch(/^image: 1 billed for a failure/);
    const video = actualVideo(
      simVideo.prices,
      { seconds: 8, size: '320x240', generateAudio: false, referenceImages: 0 },
      { secondsDelivered: 0, audio: false, billedFailure: { seconds: 8 } },
    );
    expect(video.amount).toBe(8 * 20_000);
  });

  it('never bills more than was asked, and flags an upstream that reports more', () => {
    const images = actualImage(simImage.prices, imageInput, { imagesDelivered: 7 });
    expect(images.amount).toBe(3 * 40_000 + 5_000);
    expect(images.reportExceededRequest).toBe(true);
    expect(images.rule).toContain('more than the 3 asked');
    const video = actualVideo(
      simVideo.prices,
      { seconds: 4, size: '640x360', generateAudio: false, referenceImages: 0 },
      { secondsDelivered: 9.5, audio: false },
    );
    expect(video.amount).toBe(4 * 50_000);
    expect(video.reportExceededRequest).toBe(true);
  });

  it('rounds delivered seconds up to a whole second, after cutting float noise at the millisecond', () => {
    expect(roundUpSeconds(3.2)).toBe(4);
    expect(roundUpSeconds(2.001)).toBe(3);
    expect(roundUpSeconds(4)).toBe(4);
    expect(roundUpSeconds(4.000_000_000_1)).toBe(4);
    expect(roundUpSeconds(0.0004)).toBe(0);
    const video = actualVideo(
      simVideo.prices,
      { seconds: 8, size: '1280x720', generateAudio: false, referenceImages: 0 },
      { secondsDelivered: 3.2, audio: false },
    );
    expect(video.lineItems).toEqual([
      {
        name: 'video_second',
        quantity: 4,
        unit_price: 100_000,
        amount: 400_000,
        detail: '1280x720',
      },
    ]);
    expect(video.rule).toBe(
      'video: 3.2 s delivered, rounded up to 4 s: video_second 4 x 100000 = 400000 = 400000 micro-yuan',
    );
  });

  it('bills the audio price only when audio was asked and delivered', () => {
    const input = { seconds: 2, size: '640x360', generateAudio: true, referenceImages: 0 };
    expect(actualVideo(simVideo.prices, input, { secondsDelivered: 2, audio: true }).amount).toBe(
      2 * 70_000,
    );
    expect(actualVideo(simVideo.prices, input, { secondsDelivered: 2, audio: false }).amount).toBe(
      2 * 50_000,
    );
    expect(
      actualVideo(
        simVideo.prices,
        { ...input, generateAudio: false },
        { secondsDelivered: 2, audio: true },
      ).amount,
    ).toBe(2 * 50_000);
  });

  it('never exceeds the quote, whatever the upstream reports', () => {
    for (const seconds of simVideo.video_seconds)
      for (const generateAudio of [false, true])
        for (const referenceImages of [0, 4]) {
          const quote = quoteVideo(simVideo, simVideo.prices, {
            seconds,
            size: '1280x720',
            generateAudio,
            referenceImages,
          });
          for (const secondsDelivered of [0, 0.5, seconds - 0.01, seconds, seconds + 3.7])
            for (const audio of [false, true]) {
              const actual = actualVideo(simVideo.prices, quote.input, { secondsDelivered, audio });
              expect(actual.amount).toBeLessThanOrEqual(quote.quotedAmount ?? -1);
              expect(Number.isSafeInteger(actual.amount)).toBe(true);
            }
        }
  });

  it('refuses a report that is not a count (the adapter must have checked it)', () => {
    expect(() => actualImage(simImage.prices, imageInput, { imagesDelivered: 1.5 })).toThrow(
      /whole number/,
    );
    expect(() =>
      actualVideo(
        simVideo.prices,
        { seconds: 4, size: '640x360', generateAudio: false, referenceImages: 0 },
        { secondsDelivered: Number.NaN, audio: false },
      ),
    ).toThrow(/finite/);
  });
});
