import type { ConsoleModel, ServiceTierPricing, TokenPriceFields } from '@tollgate/protocol';
import type { MessageKey } from './messages/index.js';

/**
 * A model's prices as the models page lists them (docs/console.md, "Models page"): one row per
 * price the gateway charges, by its shape (docs/billing.md) — per million tokens (input, cached
 * input, cache writes, output, reasoning; again for each length tier and service tier), per chat
 * request, per image by size and quality, per second of video by size (with audio dearer), an H3
 * video action per second by resolution, per reference image beyond the free ones. Pure (tested
 * in test/how-to-call.test.ts); each amount is micro-yuan, shown with `Yuan`.
 */
export interface PriceRow {
  /** The row's label; `{size}`, `{quality}`, `{resolution}`, `{free}` are filled from `values`. */
  readonly label: MessageKey;
  readonly values: Readonly<Record<string, string>>;
  readonly micro: number;
  /**
   * Where the price applies when not to every request: a length tier, a service tier. Its label
   * wraps the row's (`{item}`), filled from its own values.
   */
  readonly within?: {
    readonly label: MessageKey;
    readonly values: Readonly<Record<string, string>>;
  };
}

const TOKEN_ROWS = [
  ['input_per_million_tokens', 'models.price.input'],
  ['cached_input_per_million_tokens', 'models.price.cachedInput'],
  ['cache_write_per_million_tokens', 'models.price.cacheWrite'],
  ['cache_write_1h_per_million_tokens', 'models.price.cacheWrite1h'],
  ['output_per_million_tokens', 'models.price.output'],
  ['reasoning_per_million_tokens', 'models.price.reasoning'],
  ['audio_input_per_million_tokens', 'models.price.audioInput'],
  ['image_input_per_million_tokens', 'models.price.imageInput'],
  ['audio_output_per_million_tokens', 'models.price.audioOutput'],
  ['image_output_per_million_tokens', 'models.price.imageOutput'],
] as const satisfies readonly (readonly [keyof TokenPriceFields, MessageKey])[];

function byKey(
  table: Readonly<Partial<Record<string, number>>> | undefined,
  label: MessageKey,
  name: string,
): PriceRow[] {
  return Object.entries(table ?? {}).flatMap(([key, micro]) =>
    micro === undefined ? [] : [{ label, values: { [name]: key }, micro }],
  );
}

/** The token rows of one price table: its own fields, then each length tier's. */
function tokenRows(table: ServiceTierPricing, serviceTier: string | undefined): PriceRow[] {
  const fields = (prices: TokenPriceFields, within: PriceRow['within']) =>
    TOKEN_ROWS.flatMap(([field, label]) => {
      const micro = prices[field];
      if (micro === undefined) return [];
      return [
        within === undefined ? { label, values: {}, micro } : { label, values: {}, micro, within },
      ];
    });
  const tier = serviceTier === undefined ? {} : { tier: serviceTier };
  return [
    ...fields(
      table,
      serviceTier === undefined ? undefined : { label: 'models.price.inServiceTier', values: tier },
    ),
    ...(table.tiers ?? []).flatMap((length) =>
      fields(length.prices, {
        label:
          serviceTier === undefined ? 'models.price.inTier' : 'models.price.inServiceTierAndTier',
        values: { ...tier, above: String(length.above_input_tokens) },
      }),
    ),
  ];
}

export function priceRows(model: ConsoleModel): PriceRow[] {
  const pricing = model.pricing;
  const rows: PriceRow[] = tokenRows(pricing, undefined);
  if (pricing.per_request !== undefined)
    rows.push({ label: 'models.price.perRequest', values: {}, micro: pricing.per_request });
  for (const [name, table] of Object.entries(pricing.service_tiers ?? {}))
    rows.push(...tokenRows(table, name));
  for (const [size, qualities] of Object.entries(pricing.per_image ?? {}))
    for (const [quality, micro] of Object.entries(qualities))
      rows.push({ label: 'models.price.perImage', values: { size, quality }, micro });
  rows.push(...byKey(pricing.per_second, 'models.price.perSecond', 'size'));
  rows.push(...byKey(pricing.per_second_with_audio, 'models.price.perSecondAudio', 'size'));
  const h3 = model.h3_pricing;
  rows.push(...byKey(h3?.h3_per_second, 'models.price.h3PerSecond', 'resolution'));
  rows.push(...byKey(h3?.h3_per_second_with_audio, 'models.price.h3PerSecondAudio', 'resolution'));
  if (pricing.per_reference_image !== undefined) {
    const free = h3?.free_reference_images ?? pricing.free_reference_images ?? 0;
    rows.push({
      label: free > 0 ? 'models.price.perReferenceFree' : 'models.price.perReference',
      values: { free: String(free) },
      micro: pricing.per_reference_image,
    });
  }
  return rows;
}

/** A row's label for people: its own, inside its tier's (`{item}`) when it has one. */
export function rowLabel(row: PriceRow, t: (key: MessageKey) => string): string {
  const item = filled(t(row.label), row.values);
  return row.within === undefined
    ? item
    : filled(t(row.within.label), { ...row.within.values, item });
}

/** `text` with each `{name}` replaced by `values[name]` (unknown names left as they are). */
export function filled(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(/\{(\w+)\}/g, (all, name: string) => values[name] ?? all);
}
