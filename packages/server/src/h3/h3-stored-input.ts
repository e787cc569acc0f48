import { z } from 'zod';
import { taskChannel } from '../routing/channels.js';
import type { H3Pricing } from '../billing/h3-pricing.js';
import type { ModelConfig } from '../config/schema.js';
import type { H3Media, H3Request } from './h3-input.js';

const pricingSchema = z.discriminatedUnion('action', [
  z.strictObject({
    action: z.enum(['generate', 'regenerate']),
    resolution: z.string().min(1),
    generateAudio: z.boolean(),
    duration: z.number().int().min(0),
    referenceImages: z.number().int().min(0),
    inputAudioMs: z.number().min(0),
    inputVideoMs: z.number().min(0),
  }),
  z.strictObject({
    action: z.literal('understand'),
    maxInputTokens: z.number().int().min(0),
    maxOutputTokens: z.number().int().min(0),
  }),
]) satisfies z.ZodType<H3Pricing>;

/**
 * An H3 task's input as stored at submission (`tasks.input`): what the upstream is sent, and
 * what it was priced on (`pricing`: the measured media and the worst cases held), so the bill is
 * computed from the same numbers as the quote. Parsed back with this schema wherever it is read
 * (h3-family.ts): a row that does not match stops for an operator, it is never priced.
 */
export const h3StoredInputSchema = z.strictObject({
  action: z.enum(['generate', 'regenerate', 'understand']),
  upstreamModel: z.string().min(1),
  digest: z.string().min(1),
  prompt: z.string().optional(),
  resolution: z.string().optional(),
  ratio: z.string().optional(),
  duration: z.number().int().min(0),
  generateAudio: z.boolean(),
  watermark: z.boolean(),
  references: z.array(
    z.strictObject({
      assetId: z.string().min(1),
      role: z.enum([
        'first_frame',
        'last_frame',
        'reference_image',
        'reference_video',
        'reference_audio',
      ]),
    }),
  ),
  sourceTaskId: z.string().optional(),
  /** The source task's delivered video, sent upstream as the `reference_video`. */
  sourceAssetId: z.string().optional(),
  pricing: pricingSchema,
});

export type H3StoredInput = z.infer<typeof h3StoredInputSchema>;

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
