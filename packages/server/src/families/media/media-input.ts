import { invalidInput } from '../../errors/api-error.js';

/** The kinds of this folder's families. */
export type MediaKind = 'image' | 'video';

/** Most reference images one task may name (a model may allow fewer). */
const MAX_ASSET_IDS = 16;
const MAX_PROMPT_CHARACTERS = 32_000;

const common = {
  model: { type: 'string', minLength: 1, maxLength: 128 },
  prompt: { type: 'string', minLength: 1, maxLength: MAX_PROMPT_CHARACTERS },
  size: { type: 'string', pattern: '^[0-9]{1,5}x[0-9]{1,5}$' },
  assetIds: {
    type: 'array',
    maxItems: MAX_ASSET_IDS,
    items: { type: 'string', minLength: 1, maxLength: 64 },
  },
  expected_price_version: { type: 'string', minLength: 1, maxLength: 200 },
  expected_quote_amount: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
} as const;

/** OpenAI Images fields plus `assetIds` and the echoed quote (spec 4.1.4; docs/tasks.md). */
export const imageBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['model', 'prompt'],
  properties: {
    ...common,
    n: { type: 'integer', minimum: 1, maximum: 16 },
    quality: { type: 'string', minLength: 1, maxLength: 32 },
  },
} as const;

/** OpenAI Videos fields (`seconds` as OpenAI's string or an integer) plus `assetIds`, audio and the echoed quote. */
export const videoBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['model', 'prompt'],
  properties: {
    ...common,
    seconds: {
      anyOf: [
        { type: 'integer', minimum: 1, maximum: 3_600 },
        { type: 'string', pattern: '^[0-9]{1,4}$' },
      ],
    },
    generate_audio: { type: 'boolean' },
  },
} as const;

export interface TaskBody {
  readonly model: string;
  readonly prompt: string;
  readonly size?: string;
  readonly assetIds?: string[];
  readonly expected_price_version?: string;
  readonly expected_quote_amount?: number;
  readonly n?: number;
  readonly quality?: string;
  readonly seconds?: number | string;
  readonly generate_audio?: boolean;
}

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
