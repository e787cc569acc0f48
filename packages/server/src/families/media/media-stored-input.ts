import { z } from 'zod';

/**
 * What an image or video task stores as its input (`tasks.input`, written by media-service.ts):
 * the input as quoted (defaults filled in) plus what the upstream is sent. The same schemas
 * parse it back wherever it is read (task-family.ts `parseInput`): a row that does not match
 * stops for an operator, it is never priced.
 */
const common = {
  size: z.string().min(1),
  referenceImages: z.number().int().min(0),
  prompt: z.string(),
  upstreamModel: z.string().min(1),
  assetIds: z.array(z.string().min(1)).optional(),
};

export const imageStoredInputSchema = z.strictObject({
  ...common,
  n: z.number().int().min(1),
  quality: z.string().min(1),
});

export const videoStoredInputSchema = z.strictObject({
  ...common,
  seconds: z.number().int().min(1),
  generateAudio: z.boolean(),
});

export type ImageStoredInput = z.infer<typeof imageStoredInputSchema>;
export type VideoStoredInput = z.infer<typeof videoStoredInputSchema>;
