import type { AssetMediaType } from '../../assets/probe.js';
import { actualImage } from '../../billing/task-pricing.js';
import { readTaskAssets } from '../../tasks/task-assets.js';
import type { TaskFamily } from '../../tasks/task-family.js';
import { imageStoredInputSchema, type ImageStoredInput } from './media-stored-input.js';
import { mediaTaskPath, imageView } from './media-view.js';

const IMAGE_TYPES: readonly AssetMediaType[] = ['image/png', 'image/jpeg', 'image/webp'];
/** The largest image output stored. */
const MAX_IMAGE_BYTES = 64 * 1024 * 1024;

/**
 * Images (OpenAI Images upstreams, spec 4.1.4): answered synchronously, so an operator has no
 * upstream id to attach; billed per image delivered (never more than were stored).
 */
export const imageFamily: TaskFamily<ImageStoredInput> = {
  kind: 'image',
  attachable: false,
  path: (id) => mediaTaskPath('image', id),
  parseInput: (stored) => imageStoredInputSchema.parse(stored),
  provider: (providers, upstream, caller) => providers.tasks(upstream, 'image', caller),
  async upstreamInput(deps, task, input) {
    return {
      kind: 'image',
      upstreamModel: input.upstreamModel,
      prompt: input.prompt,
      size: input.size,
      n: input.n,
      quality: input.quality,
      seconds: undefined,
      generateAudio: false,
      references: (await readTaskAssets(deps, task, input.assetIds ?? [])).map(
        ({ mediaType, bytes }) => ({ mediaType, bytes }),
      ),
    };
  },
  outputRules: () => ({ maxBytes: MAX_IMAGE_BYTES, mediaTypes: IMAGE_TYPES }),
  deliveredReport: (report, stored) => ({
    ...report,
    imagesDelivered: Math.min(report.imagesDelivered, stored.length),
  }),
  priceDelivery: (prices, input, report) =>
    actualImage(prices, input, { imagesDelivered: report.imagesDelivered }),
  priceBilledFailure: (prices, input, report) =>
    actualImage(prices, input, {
      imagesDelivered: 0,
      billedFailure: { images: report.imagesDelivered },
    }),
  view: (row) => imageView(row),
};
