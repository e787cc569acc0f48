import { actualH3Understand, actualH3Video, type H3Pricing } from '../billing/h3-pricing.js';
import { actualImage, actualVideo, type ActualAmount } from '../billing/task-pricing.js';
import type { H3StoredInput } from '../h3/h3-stored-input.js';
import type { ModelPrices } from '../config/schema.js';
import type { DeliveryReport } from '../providers/task-provider.js';

/** A task's input as stored at creation: the quoted input plus what the upstream is sent. */
export type StoredInput =
  | {
      readonly kind: 'image';
      readonly n: number;
      readonly size: string;
      readonly quality: string;
      readonly referenceImages: number;
      readonly prompt: string;
      readonly upstreamModel: string;
      readonly assetIds?: readonly string[];
    }
  | {
      readonly kind: 'video';
      readonly seconds: number;
      readonly size: string;
      readonly generateAudio: boolean;
      readonly referenceImages: number;
      readonly prompt: string;
      readonly upstreamModel: string;
      readonly assetIds?: readonly string[];
    }
  | ({ readonly kind: 'h3' } & H3StoredInput);

/**
 * The actual amount of what was delivered, at the task's own price version (never today's):
 * images delivered, or seconds delivered (the upstream's report, cut to the stored file's own
 * duration when that is shorter: a caller never pays for seconds it cannot play). Audio counts
 * only when it was asked (the upstream was told to make it).
 */
export function priceDelivery(
  prices: ModelPrices,
  input: StoredInput,
  report: DeliveryReport,
): ActualAmount {
  if (input.kind === 'h3') return priceH3(prices, input.pricing, report, false);
  if (input.kind === 'image')
    return actualImage(prices, input, { imagesDelivered: report.imagesDelivered });
  return actualVideo(prices, input, {
    secondsDelivered: report.secondsDelivered,
    audio: input.generateAudio,
  });
}

/** The amount of a failure the upstream billed (its report says how much it delivered or charged). */
export function priceBilledFailure(
  prices: ModelPrices,
  input: StoredInput,
  report: DeliveryReport,
): ActualAmount {
  if (input.kind === 'h3') return priceH3(prices, input.pricing, report, true);
  if (input.kind === 'image')
    return actualImage(prices, input, {
      imagesDelivered: 0,
      billedFailure: { images: report.imagesDelivered },
    });
  return actualVideo(prices, input, {
    secondsDelivered: 0,
    audio: false,
    billedFailure: { seconds: report.secondsDelivered },
  });
}

/**
 * H3: video actions on the delivered (or billed) output seconds plus the measured input; an
 * `understand` on the tokens the upstream reports. A finished `understand` without a token
 * report is never billed on a guess: this throws, and the worker reads the task again later.
 */
function priceH3(
  prices: ModelPrices,
  pricing: H3Pricing,
  report: DeliveryReport,
  billedFailure: boolean,
): ActualAmount {
  if (pricing.action !== 'understand')
    return actualH3Video(prices, pricing, {
      outputMs: report.secondsDelivered * 1000,
      billedFailure,
    });
  if (report.tokens === undefined)
    throw new Error('the upstream reported no token usage for an understand task');
  return actualH3Understand(prices, pricing, report.tokens);
}
