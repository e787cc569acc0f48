import type { ConsoleModel } from '@tollgate/protocol';
import type { MessageKey } from './messages/index.js';

/**
 * A model's prices as the models page lists them (docs/console.md, "Models page"): one row per
 * price the gateway charges, by its shape (docs/billing.md) — per million tokens (input, cached
 * input, output, reasoning), per image by size and quality, per second of video by size (with
 * audio dearer), an H3 video action per second by resolution, per reference image beyond the free
 * ones. Pure (tested in test/how-to-call.test.ts); each amount is micro-yuan, shown with `Yuan`.
 */
export interface PriceRow {
  /** The row's label; `{size}`, `{quality}`, `{resolution}`, `{free}` are filled from `values`. */
  readonly label: MessageKey;
  readonly values: Readonly<Record<string, string>>;
  readonly micro: number;
}

const TOKEN_ROWS = [
  ['input_per_million_tokens', 'models.price.input'],
  ['cached_input_per_million_tokens', 'models.price.cachedInput'],
  ['output_per_million_tokens', 'models.price.output'],
  ['reasoning_per_million_tokens', 'models.price.reasoning'],
] as const satisfies readonly (readonly [keyof ConsoleModel['pricing'], MessageKey])[];

function byKey(
  table: Readonly<Partial<Record<string, number>>> | undefined,
  label: MessageKey,
  name: string,
): PriceRow[] {
  return Object.entries(table ?? {}).flatMap(([key, micro]) =>
    micro === undefined ? [] : [{ label, values: { [name]: key }, micro }],
  );
}

export function priceRows(model: ConsoleModel): PriceRow[] {
  const pricing = model.pricing;
  const rows: PriceRow[] = [];
  for (const [field, label] of TOKEN_ROWS) {
    const micro = pricing[field];
    if (micro !== undefined) rows.push({ label, values: {}, micro });
  }
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

/** `text` with each `{name}` replaced by `values[name]` (unknown names left as they are). */
export function filled(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(/\{(\w+)\}/g, (all, name: string) => values[name] ?? all);
}
