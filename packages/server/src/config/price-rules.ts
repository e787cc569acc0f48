import type { Family, ModelConfig, ModelPrices } from './model-schema.js';

/**
 * Which prices a model needs and may carry, by its families (docs/billing.md). One function for
 * the configuration file and for admin price changes, so both refuse the same things. The
 * schema has already checked each field alone (integers, bounds, size and quality spelling);
 * these rules relate fields to each other and to the model.
 */

export interface PriceIssue {
  /** Path from the model: `['prices', 'per_image']`, `['image_sizes', 0]`. */
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** The model fields the rules read (the parsed model, or one being checked). */
export type PricedModel = Pick<
  ModelConfig,
  | 'id'
  | 'families'
  | 'image_sizes'
  | 'image_qualities'
  | 'video_sizes'
  | 'generate_audio'
  | 'max_reference_images'
>;

/** The per-million-token prices of a price table (the base, a length tier, a service tier). */
export const TOKEN_PRICE_FIELDS = [
  'input_per_million_tokens',
  'output_per_million_tokens',
  'reasoning_per_million_tokens',
  'cached_input_per_million_tokens',
  'cache_write_per_million_tokens',
  'cache_write_1h_per_million_tokens',
  'audio_input_per_million_tokens',
  'image_input_per_million_tokens',
  'audio_output_per_million_tokens',
  'image_output_per_million_tokens',
] as const satisfies readonly (keyof ModelPrices)[];

/** The token prices only a chat answer's usage reports (audio and image tokens). */
const MODALITY_PRICE_FIELDS = [
  'audio_input_per_million_tokens',
  'image_input_per_million_tokens',
  'audio_output_per_million_tokens',
  'image_output_per_million_tokens',
] as const satisfies readonly (typeof TOKEN_PRICE_FIELDS)[number][];

/** What only a chat request is billed by: length tiers, a fee per request, service tiers. */
export const CHAT_PRICE_FIELDS = [
  'tiers',
  'per_request',
  'per_tool_call',
  'service_tiers',
] as const satisfies readonly (keyof ModelPrices)[];

/** Every token price field of a model's prices. */
export const TOKEN_PRICING_FIELDS = [...TOKEN_PRICE_FIELDS, ...CHAT_PRICE_FIELDS] as const;

/** Families priced per chat request (chat/chat-pricing.ts), the only ones CHAT_PRICE_FIELDS apply to. */
const CHAT_PRICED_FAMILIES: ReadonlySet<Family> = new Set<Family>(['chat', 'ocr']);

/** Families billed on tokens; images and videos are billed per image and per second. */
export function billsTokens(family: Family): boolean {
  return family !== 'images' && family !== 'videos';
}

/** Families that may carry video and reference-image prices (H3 bills seconds and references too). */
const SECOND_FAMILIES: ReadonlySet<Family> = new Set<Family>(['videos', 'h3']);
const REFERENCE_FAMILIES: ReadonlySet<Family> = new Set<Family>(['images', 'videos', 'h3']);

/**
 * Every rule `prices` breaks for `model`. `source: 'config'` adds the checks that tie the
 * model's own offer (`image_sizes`, `video_sizes`, `image_qualities`, `generate_audio`) to its
 * prices: an admin price change may close a size on purpose (a quote then names it as closed),
 * a configuration that offers what it never priced is a mistake.
 */
export function modelPriceIssues(
  model: PricedModel,
  prices: ModelPrices,
  source: 'config' | 'admin',
): PriceIssue[] {
  const issues: PriceIssue[] = [];
  const add = (path: readonly (string | number)[], message: string) =>
    issues.push({ path, message });
  const families = model.families;
  const has = (family: Family) => families.includes(family);
  const familyList = families.join(', ');

  if (families.some(billsTokens)) {
    if (prices.input_per_million_tokens === undefined)
      add(['prices', 'input_per_million_tokens'], 'required');
  } else {
    const tokenField = TOKEN_PRICING_FIELDS.find((field) => prices[field] !== undefined);
    if (tokenField !== undefined)
      add(
        ['prices', tokenField],
        `is a token price; ${model.id} (${familyList}) is billed per image or per second, not per token`,
      );
  }

  if (!families.some((family) => CHAT_PRICED_FAMILIES.has(family))) {
    const chatField = [...CHAT_PRICE_FIELDS, ...MODALITY_PRICE_FIELDS].find(
      (field) => prices[field] !== undefined,
    );
    if (chatField !== undefined && families.some(billsTokens))
      // Anything else would be taken and never applied: only chat requests read these.
      add(
        ['prices', chatField],
        `only for models of family chat or ocr; ${model.id} is ${familyList}`,
      );
  }

  if (has('images') && prices.per_image === undefined)
    add(['prices', 'per_image'], 'required for a model of family images');
  if (!has('images') && prices.per_image !== undefined)
    add(['prices', 'per_image'], `only for models of family images; ${model.id} is ${familyList}`);

  if (has('videos') && prices.per_second === undefined)
    add(['prices', 'per_second'], 'required for a model of family videos');
  const secondsAllowed = families.some((family) => SECOND_FAMILIES.has(family));
  for (const field of ['per_second', 'per_second_with_audio'] as const) {
    if (!secondsAllowed && prices[field] !== undefined)
      add(
        ['prices', field],
        `only for models of family videos or h3; ${model.id} is ${familyList}`,
      );
  }
  if (prices.per_second_with_audio !== undefined) {
    for (const [size, withAudio] of Object.entries(prices.per_second_with_audio)) {
      const silent = prices.per_second?.[size];
      if (silent === undefined)
        add(['prices', 'per_second_with_audio', size], `has no per_second price for ${size}`);
      else if (withAudio < silent)
        // A video asked with audio but delivered without is billed at per_second; audio never
        // cheaper keeps the actual amount at or below the quote.
        add(
          ['prices', 'per_second_with_audio', size],
          `is ${withAudio}, below per_second ${silent}; the price with audio must be at least the price without`,
        );
    }
  }

  const referencesAllowed = families.some((family) => REFERENCE_FAMILIES.has(family));
  for (const field of ['per_reference_image', 'free_reference_images'] as const) {
    if (!referencesAllowed && prices[field] !== undefined)
      add(
        ['prices', field],
        `only for models of family images, videos or h3; ${model.id} is ${familyList}`,
      );
  }
  const free = prices.free_reference_images ?? (has('h3') ? H3_FREE_REFERENCE_IMAGES : 0);
  if (model.max_reference_images > free && prices.per_reference_image === undefined)
    add(
      ['prices', 'per_reference_image'],
      `required: max_reference_images allows ${model.max_reference_images} reference images and ${free} are free`,
    );

  issues.push(...h3PriceIssues(model, prices));
  if (source === 'config') issues.push(...offerIssues(model, prices));
  return issues;
}

/**
 * A price of 0 makes something free of charge, which is as often a typo as a decision: it is
 * taken only with `free: true` beside it (on the model in the configuration file, in the body of
 * an admin price change), and `free: true` with no price at 0 is refused too. The one rule for
 * both paths; paths start at the model like `modelPriceIssues`' (`['prices', 'per_image', ...]`).
 */
export function zeroPriceIssues(
  prices: ModelPrices,
  free: boolean | undefined,
  source: 'config' | 'admin',
): PriceIssue[] {
  const zero = zeroAmounts(prices)[0];
  if (zero !== undefined && free !== true)
    return [
      {
        path: ['prices', ...zero],
        message:
          source === 'config'
            ? 'is 0, which makes it free of charge; set "free": true on the model if that is meant'
            : 'is 0, which makes it free of charge; send "free": true with it if that is meant',
      },
    ];
  if (zero === undefined && free === true)
    return [{ path: ['free'], message: 'is true but no price is 0' }];
  return [];
}

/**
 * The paths of every amount that is 0 (`['per_image', '1024x1024', 'hd']`), token and task
 * prices alike, in length tiers and service tiers too. `free_reference_images` is a count, not an
 * amount: 0 there charges nothing extra.
 */
function zeroAmounts(prices: ModelPrices): (string | number)[][] {
  const zeros = tableZeros(prices, []);
  for (const [name, table] of Object.entries(prices.service_tiers ?? {}))
    zeros.push(...tableZeros(table, ['service_tiers', name]));
  for (const [size, qualities] of Object.entries(prices.per_image ?? {}))
    for (const [quality, amount] of Object.entries(qualities))
      if (amount === 0) zeros.push(['per_image', size, quality]);
  for (const field of [
    'per_second',
    'per_second_with_audio',
    'h3_per_second',
    'h3_per_second_with_audio',
  ] as const)
    for (const [size, amount] of Object.entries(prices[field] ?? {}))
      if (amount === 0) zeros.push([field, size]);
  if (prices.per_reference_image === 0) zeros.push(['per_reference_image']);
  return zeros;
}

/** The zero token prices of one price table and of its length tiers, under `path`. */
function tableZeros(
  table: Pick<ModelPrices, (typeof TOKEN_PRICE_FIELDS)[number] | 'tiers'>,
  path: readonly (string | number)[],
): (string | number)[][] {
  const zeros = TOKEN_PRICE_FIELDS.filter((field) => table[field] === 0).map((field) => [
    ...path,
    field,
  ]);
  table.tiers?.forEach((tier, index) => {
    for (const field of TOKEN_PRICE_FIELDS)
      if (tier.prices[field] === 0) zeros.push([...path, 'tiers', index, 'prices', field]);
  });
  return zeros;
}

/** The first reference images an H3 task gets free (spec 8): fixed, not configured. */
export const H3_FREE_REFERENCE_IMAGES = 5;

/** H3: per-second prices by resolution for the video actions, token prices for `understand`. */
function h3PriceIssues(model: PricedModel, prices: ModelPrices): PriceIssue[] {
  const issues: PriceIssue[] = [];
  const isH3 = model.families.includes('h3');
  for (const field of ['h3_per_second', 'h3_per_second_with_audio'] as const) {
    if (!isH3 && prices[field] !== undefined)
      issues.push({
        path: ['prices', field],
        message: `only for models of family h3; ${model.id} is ${model.families.join(', ')}`,
      });
  }
  if (!isH3) return issues;
  if (prices.h3_per_second === undefined)
    issues.push({
      path: ['prices', 'h3_per_second'],
      message: 'required for a model of family h3',
    });
  if (prices.h3_per_second_with_audio === undefined)
    issues.push({
      path: ['prices', 'h3_per_second_with_audio'],
      message: 'required for a model of family h3 (regenerate always makes audio)',
    });
  if (prices.output_per_million_tokens === undefined)
    issues.push({
      path: ['prices', 'output_per_million_tokens'],
      message: 'required for a model of family h3 (understand is billed on tokens)',
    });
  if (
    prices.free_reference_images !== undefined &&
    prices.free_reference_images !== H3_FREE_REFERENCE_IMAGES
  )
    issues.push({
      path: ['prices', 'free_reference_images'],
      message: `H3 gives the first ${H3_FREE_REFERENCE_IMAGES} reference images free (spec 8); leave it out`,
    });
  for (const [resolution, withAudio] of Object.entries(prices.h3_per_second_with_audio ?? {})) {
    const silent = prices.h3_per_second?.[resolution as keyof typeof prices.h3_per_second];
    if (silent !== undefined && withAudio < silent)
      issues.push({
        path: ['prices', 'h3_per_second_with_audio', resolution],
        message: `is ${withAudio}, below h3_per_second ${silent}; the price with audio must be at least the price without`,
      });
  }
  return issues;
}

/** Configuration only: everything the model offers has a price. */
function offerIssues(model: PricedModel, prices: ModelPrices): PriceIssue[] {
  const issues: PriceIssue[] = [];
  const perImage = prices.per_image;
  if (perImage !== undefined) {
    model.image_sizes?.forEach((size, index) => {
      if (perImage[size] === undefined)
        issues.push({ path: ['image_sizes', index], message: `${size} has no per_image price` });
    });
    const offeredSizes = model.image_sizes ?? Object.keys(perImage);
    model.image_qualities?.forEach((quality, index) => {
      if (!offeredSizes.some((size) => perImage[size]?.[quality] !== undefined))
        issues.push({
          path: ['image_qualities', index],
          message: `${quality} has no per_image price for any offered size`,
        });
    });
  }
  const perSecond = prices.per_second;
  if (perSecond !== undefined) {
    model.video_sizes?.forEach((size, index) => {
      if (perSecond[size] === undefined)
        issues.push({ path: ['video_sizes', index], message: `${size} has no per_second price` });
    });
    if (model.generate_audio && prices.per_second_with_audio === undefined)
      issues.push({
        path: ['prices', 'per_second_with_audio'],
        message: 'required when generate_audio is true',
      });
  }
  return issues;
}
