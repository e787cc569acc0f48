import type { AssetMediaType } from '../../assets/probe.js';
import { actualVideo } from '../../billing/task-pricing.js';
import { readTaskAssets } from '../../tasks/task-assets.js';
import { secondsStored } from '../../tasks/task-outputs.js';
import type { TaskFamily } from '../../tasks/task-family.js';
import { videoStoredInputSchema, type VideoStoredInput } from './media-stored-input.js';
import { mediaTaskPath, videoView } from './media-view.js';

const VIDEO_TYPES: readonly AssetMediaType[] = ['video/mp4'];

/**
 * Videos (OpenAI Videos upstreams, spec 4.1.4): accepted, then polled; billed per second
 * delivered — the upstream's report cut to the stored files' own duration when that is shorter
 * (a caller never pays for seconds it cannot play); audio counts only when it was asked.
 */
export const videoFamily: TaskFamily<VideoStoredInput> = {
  kind: 'video',
  attachable: true,
  path: (id) => mediaTaskPath('video', id),
  parseInput: (stored) => videoStoredInputSchema.parse(stored),
  provider: (providers, upstream, caller) => providers.tasks(upstream, 'video', caller),
  async upstreamInput(deps, task, input) {
    return {
      kind: 'video',
      upstreamModel: input.upstreamModel,
      prompt: input.prompt,
      size: input.size,
      n: 1,
      quality: undefined,
      seconds: input.seconds,
      generateAudio: input.generateAudio,
      references: (await readTaskAssets(deps, task, input.assetIds ?? [])).map(
        ({ mediaType, bytes }) => ({ mediaType, bytes }),
      ),
    };
  },
  outputRules: (deps) => ({ maxBytes: deps.maxVideoBytes, mediaTypes: VIDEO_TYPES }),
  deliveredReport: secondsStored,
  priceDelivery: (prices, input, report) =>
    actualVideo(prices, input, {
      secondsDelivered: report.secondsDelivered,
      audio: input.generateAudio,
    }),
  priceBilledFailure: (prices, input, report) =>
    actualVideo(prices, input, {
      secondsDelivered: 0,
      audio: false,
      billedFailure: { seconds: report.secondsDelivered },
    }),
  view: (row) => videoView(row),
};
