import type { H3Action, H3Role } from '@tollgate/protocol';
import { taskChannel } from '../routing/channels.js';
import type { H3Pricing } from '../billing/h3-pricing.js';
import type { ModelConfig } from '../config/schema.js';
import type { H3Request } from './h3-input.js';
import type { H3Media } from './h3-media.js';

/**
 * An H3 task's input as stored at submission (`tasks.input`): what the upstream is sent, and
 * what it was priced on (`pricing`: the measured media and the worst cases held), so the bill is
 * computed from the same numbers as the quote.
 */
export interface H3StoredInput {
  readonly action: H3Action;
  readonly upstreamModel: string;
  readonly digest: string;
  readonly prompt?: string;
  readonly resolution?: string;
  readonly ratio?: string;
  readonly duration: number;
  readonly generateAudio: boolean;
  readonly watermark: boolean;
  readonly references: readonly { readonly assetId: string; readonly role: H3Role }[];
  readonly sourceTaskId?: string;
  /** The source task's delivered video, sent upstream as the `reference_video`. */
  readonly sourceAssetId?: string;
  readonly pricing: H3Pricing;
}

/** Ratio of a video action that names none. */
export const DEFAULT_RATIO = '16:9';

/**
 * The input with the model's defaults filled in: the first offered resolution (regenerate: 2K),
 * 16:9, the model's first `video_seconds`, no audio (regenerate: audio), no watermark.
 */
export function storedH3Input(
  model: ModelConfig,
  request: H3Request,
  media: H3Media,
  defaults: { readonly resolution: string | undefined },
): Omit<H3StoredInput, 'pricing'> {
  const video = request.action !== 'understand';
  const resolution = video ? (request.resolution ?? defaults.resolution) : undefined;
  return {
    action: request.action,
    upstreamModel: model.h3_upstream_models?.[request.action] ?? taskChannel(model).model,
    digest: request.digest,
    ...(request.prompt === undefined ? {} : { prompt: request.prompt }),
    ...(resolution === undefined ? {} : { resolution }),
    ...(video ? { ratio: request.ratio ?? DEFAULT_RATIO } : {}),
    duration: request.duration ?? model.video_seconds[0] ?? 0,
    generateAudio: request.action === 'regenerate' ? true : video && request.generateAudio === true,
    watermark: request.watermark === true,
    references: request.references.map(({ assetId, role }) => ({ assetId, role })),
    ...(media.source === undefined
      ? {}
      : { sourceTaskId: media.source.taskId, sourceAssetId: media.source.assetId }),
  };
}
