import { MAX_MOVEMENT_MICRO_YUAN } from '@tollgate/protocol';
import { z } from 'zod';

/**
 * The price objects of the configuration file (a model's `prices`, a channel's `cost`): every
 * amount an integer number of micro-yuan, per the unit its field names. Which fields a family
 * needs is checked by price-rules.ts.
 */

const microYuan = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/**
 * One price per unit (an image, a second of video, a reference image, a chat request), in
 * micro-yuan. At most the largest single movement: a price above it could never be charged even
 * once.
 */
const taskAmount = z
  .number()
  .int()
  .nonnegative()
  .max(
    MAX_MOVEMENT_MICRO_YUAN,
    `must be at most ${MAX_MOVEMENT_MICRO_YUAN} micro-yuan (the largest single charge)`,
  );
const nonEmpty = (value: object) => Object.keys(value).length > 0;
/** A record whose bad key is reported with its key schema's message, not "Invalid key in record". */
const keyMessage = {
  error: (issue: { code?: string; issues?: readonly { message: string }[] }) =>
    issue.code === 'invalid_key' ? issue.issues?.[0]?.message : undefined,
};

/**
 * The token prices of one price table, per 1 000 000 tokens, in micro-yuan, one per usage field
 * (docs/billing.md, "Chat prices"). Absent: cached input (cache reads) and both cache writes
 * cost the input price, reasoning the output price, audio and image tokens count as input or
 * output.
 */
const tokenPriceFields = {
  input_per_million_tokens: microYuan.optional(),
  output_per_million_tokens: microYuan.optional(),
  reasoning_per_million_tokens: microYuan.optional(),
  /** Cache reads. */
  cached_input_per_million_tokens: microYuan.optional(),
  /** Cache writes of the 5-minute cache (Anthropic's default TTL). */
  cache_write_per_million_tokens: microYuan.optional(),
  /** Cache writes of the 1-hour cache. */
  cache_write_1h_per_million_tokens: microYuan.optional(),
  /**
   * Audio and image tokens, where the upstream reports them apart (`prompt_tokens_details` /
   * `completion_tokens_details`). Absent: they are billed as input or output, in its line item.
   */
  audio_input_per_million_tokens: microYuan.optional(),
  image_input_per_million_tokens: microYuan.optional(),
  audio_output_per_million_tokens: microYuan.optional(),
  image_output_per_million_tokens: microYuan.optional(),
};

/** More length tiers than this is a table nobody priced on purpose. */
export const MAX_PRICE_TIERS = 8;

/**
 * Whole-request tiers by input length: a request whose input tokens (cache reads and writes
 * included) are above a tier's `above_input_tokens` is priced entirely at that tier's prices
 * (the highest such tier); a field a tier leaves out takes its table's value. Thresholds
 * strictly ascending, so "the highest tier reached" has one meaning.
 */
const tiersSchema = z
  .array(
    z
      .object({
        above_input_tokens: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
        prices: z.object(tokenPriceFields).strict(),
      })
      .strict(),
  )
  .min(1, 'give at least one tier, or leave tiers out')
  .max(MAX_PRICE_TIERS, `at most ${MAX_PRICE_TIERS} tiers`)
  .superRefine((tiers, context) => {
    tiers.forEach((tier, index) => {
      const previous = tiers[index - 1];
      if (previous !== undefined && tier.above_input_tokens <= previous.above_input_tokens)
        context.addIssue({
          code: 'custom',
          path: [index, 'above_input_tokens'],
          message: `must be above the previous tier's ${previous.above_input_tokens}: tiers ascend strictly`,
        });
    });
  });

/** One price table: token prices and, optionally, its length tiers. */
const priceTableShape = { ...tokenPriceFields, tiers: tiersSchema.optional() };

/**
 * The providers' names of their standard tier: OpenAI's `default` (and `auto`, a request's value
 * some answer with), Anthropic's `standard`. A request served there is billed at the base prices,
 * with nothing about a tier in its rule; a model's `service_tiers` cannot name them (chat/chat-prices.ts `servedServiceTier`).
 */
export const STANDARD_SERVICE_TIERS: readonly string[] = ['default', 'auto', 'standard'];

/** A served `service_tier` as the upstreams name it (`flex`, `priority`, `batch`). */
const serviceTierName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'service tiers are 1-32 of a-z 0-9 _ -, e.g. flex')
  .refine(
    (name) => !STANDARD_SERVICE_TIERS.includes(name),
    'is a standard tier, billed at the base prices: give its prices there',
  );

/**
 * Token prices (chat, OCR, embeddings, rerank, H3 `understand`). Besides the base table:
 * `per_request`, a fee per chat request, and `service_tiers`, a table per `service_tier` the
 * upstream reports as served, whose absent fields take the base table's values (its length
 * tiers are its own). Which fields a family needs is checked by price-rules.ts.
 */
export const tokenPricesSchema = z
  .object({
    ...priceTableShape,
    /** Added to every chat request's bill; 0 would be no fee, so it is left out instead. */
    per_request: taskAmount
      .min(1, 'must be at least 1; leave per_request out for no fee')
      .optional(),
    /**
     * Added for each tool call of the answer (each entry of its `tool_calls`, counted by the
     * gateway: no provider reports function calls in its usage), up to the model's
     * `max_tool_calls`.
     */
    per_tool_call: taskAmount
      .min(1, 'must be at least 1; leave per_tool_call out for no fee')
      .optional(),
    service_tiers: z
      .record(serviceTierName, z.object(priceTableShape).strict(), keyMessage)
      .refine(nonEmpty, 'give at least one service tier')
      .optional(),
  })
  .strict();

/** An output size, `<width>x<height>` in pixels, as OpenAI's Images and Videos APIs spell it. */
export const sizeSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,4}x[1-9][0-9]{0,4}$/, 'sizes are <width>x<height>, e.g. 1024x1024');
export const qualitySchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'qualities are 1-32 of a-z 0-9 _ -, e.g. standard');

/**
 * Prices of images and videos (docs/billing.md, "Images and videos"). Which of them a model
 * needs or may have depends on its families: see price-rules.ts. `free_reference_images` has no
 * schema default on purpose: a default would change the configured prices JSON of every existing
 * model, so each would differ from its stored version (a warning at every start, and a new
 * version at the next `tollgate prices sync`).
 */
export const taskPricesSchema = z
  .object({
    /** Per output image, by size then quality: `{"1024x1024": {"standard": 40000}}`. */
    per_image: z
      .record(
        sizeSchema,
        z
          .record(qualitySchema, taskAmount, keyMessage)
          .refine(nonEmpty, 'give at least one quality'),
        keyMessage,
      )
      .refine(nonEmpty, 'give at least one size')
      .optional(),
    /** Per second of output video, by size. */
    per_second: z
      .record(sizeSchema, taskAmount, keyMessage)
      .refine(nonEmpty, 'give at least one size')
      .optional(),
    /** Per second of output video with generated audio, by size (replaces `per_second`). */
    per_second_with_audio: z
      .record(sizeSchema, taskAmount, keyMessage)
      .refine(nonEmpty, 'give at least one size')
      .optional(),
    /** Per reference image beyond the free ones. */
    per_reference_image: taskAmount.optional(),
    /** Reference images per task that cost nothing (absent means 0). */
    free_reference_images: z.number().int().nonnegative().max(1_000).optional(),
  })
  .strict();

/** H3 video resolutions (spec 4.4; `regenerate` is 2K only). */
export const h3ResolutionSchema = z.enum(['480p', '720p', '1080p', '2K']);

/**
 * H3 prices of the video actions (docs/h3.md, "Billing"): micro-yuan per second, by output
 * resolution, of the combined seconds of input audio, input video and output video. `understand`
 * is billed on the token prices.
 */
export const h3PricesSchema = z
  .object({
    h3_per_second: z
      .record(h3ResolutionSchema, taskAmount)
      .refine(nonEmpty, 'give at least one resolution')
      .optional(),
    /** With generated audio (`generate_audio: true`; `regenerate` always); replaces `h3_per_second`. */
    h3_per_second_with_audio: z
      .record(h3ResolutionSchema, taskAmount)
      .refine(nonEmpty, 'give at least one resolution')
      .optional(),
  })
  .strict();

/** Every price a model may carry: token prices and task prices, in one flat object. */
export const modelPricesSchema = z
  .object({
    ...tokenPricesSchema.shape,
    ...taskPricesSchema.shape,
    ...h3PricesSchema.shape,
  })
  .strict();
