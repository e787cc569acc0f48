import { z } from 'zod';
import { invalidInput } from '../../errors/api-error.js';
import { jsonSchemaOf } from '../../errors/input-schema.js';

/** The kinds of this folder's families. */
export type MediaKind = 'image' | 'video';

/** Most reference images one task may name (a model may allow fewer). */
const MAX_ASSET_IDS = 16;
const MAX_PROMPT_CHARACTERS = 32_000;

const common = {
  model: z.string().min(1).max(128),
  prompt: z.string().min(1).max(MAX_PROMPT_CHARACTERS),
  size: z
    .string()
    .regex(/^[0-9]{1,5}x[0-9]{1,5}$/)
    .optional(),
  assetIds: z.array(z.string().min(1).max(64)).max(MAX_ASSET_IDS).optional(),
  expected_price_version: z.string().min(1).max(200).optional(),
  expected_quote_amount: z.int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
};

/** OpenAI Images fields plus `assetIds` and the echoed quote (spec 4.1.4; docs/tasks.md). */
export const imageBody = z.strictObject({
  ...common,
  n: z.int().min(1).max(16).optional(),
  quality: z.string().min(1).max(32).optional(),
});

/** OpenAI Videos fields (`seconds` as OpenAI's string or an integer) plus `assetIds`, audio and the echoed quote. */
export const videoBody = z.strictObject({
  ...common,
  seconds: z.union([z.int().min(1).max(3_600), z.string().regex(/^[0-9]{1,4}$/)]).optional(),
  generate_audio: z.boolean().optional(),
});

/**
 * The routes' schemas (checked by Ajv before the handler runs, and documented), made of the zod
 * bodies above: one source for the check, the OpenAPI document and the type.
 */
export const imageBodySchema = jsonSchemaOf(imageBody);
export const videoBodySchema = jsonSchemaOf(videoBody);

/** A creation or quote body as checked: either kind's fields (the kind's own schema ran). */
export type TaskBody = z.output<typeof imageBody> & z.output<typeof videoBody>;

/** A creation or quote body, parsed: the kind's own fields, defaults left to the pricing. */
export interface TaskRequest {
  readonly kind: MediaKind;
  readonly model: string;
  readonly prompt: string;
  readonly size: string | undefined;
  readonly n: number | undefined;
  readonly quality: string | undefined;
  readonly seconds: number | undefined;
  readonly generateAudio: boolean | undefined;
  readonly assetIds: readonly string[];
  readonly expected: {
    readonly priceVersion: string | undefined;
    readonly quoteAmount: number | undefined;
  };
}

/** The schema-checked body as a typed request; `assetIds` deduplicated in order. */
export function parseTaskBody(kind: MediaKind, body: TaskBody): TaskRequest {
  const assetIds = [...new Set(body.assetIds ?? [])];
  const seconds = body.seconds === undefined ? undefined : Number(body.seconds);
  if (seconds !== undefined && (!Number.isSafeInteger(seconds) || seconds < 1))
    throw invalidInput('seconds', 'must be a whole number of seconds, at least 1');
  return {
    kind,
    model: body.model,
    prompt: body.prompt,
    size: body.size,
    n: kind === 'image' ? body.n : undefined,
    quality: kind === 'image' ? body.quality : undefined,
    seconds: kind === 'video' ? seconds : undefined,
    generateAudio: kind === 'video' ? body.generate_audio : undefined,
    assetIds,
    expected: {
      priceVersion: body.expected_price_version,
      quoteAmount: body.expected_quote_amount,
    },
  };
}
