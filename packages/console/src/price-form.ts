import { MAX_MOVEMENT_MICRO_YUAN, type TokenPriceFields } from '@tollgate/protocol';
import type { MessageKey } from './messages/index.js';
import { parseYuan, yuanInputText, type AmountRule, type ParsedAmount } from './money-text.js';

/**
 * The operator's price editor (ModelsPage.tsx; docs/console.md, "Models and prices"): a model's
 * token prices typed in yuan per million tokens, one input per field, kept in step with the
 * JSON the server is sent (micro-yuan). Pure (tested in test/price-form.test.ts): the yuan go
 * through `parseYuan` and come back through `yuanInputText`, never through floating point.
 */

export type TokenPriceField = keyof TokenPriceFields;

/** The fields the form has an input for, in the order the models page lists them, each labelled. */
export const PRICE_FORM_FIELDS = [
  ['input_per_million_tokens', 'op.price.input'],
  ['cached_input_per_million_tokens', 'op.price.cachedInput'],
  ['cache_write_per_million_tokens', 'op.price.cacheWrite'],
  ['cache_write_1h_per_million_tokens', 'op.price.cacheWrite1h'],
  ['output_per_million_tokens', 'op.price.output'],
  ['reasoning_per_million_tokens', 'op.price.reasoning'],
  ['audio_input_per_million_tokens', 'op.price.audioInput'],
  ['image_input_per_million_tokens', 'op.price.imageInput'],
  ['audio_output_per_million_tokens', 'op.price.audioOutput'],
  ['image_output_per_million_tokens', 'op.price.imageOutput'],
] as const satisfies readonly (readonly [TokenPriceField, MessageKey])[];

/** A price per million tokens: 0 (free, where the price book allows it) up to one movement. */
export const PRICE_RULE: AmountRule = { min: 0, max: MAX_MOVEMENT_MICRO_YUAN, decimals: 6 };

/** Families priced by tokens (the form); images, videos and H3 keep their tables in the JSON. */
const TOKEN_FAMILIES = new Set(['chat', 'ocr', 'embeddings', 'rerank']);
/** Families billed on input tokens alone (the price book refuses any other token field). */
const INPUT_ONLY_FAMILIES = new Set(['embeddings', 'rerank']);

/** The token fields a model of `families` has an input for: none, input alone, or all of them. */
export function formFields(families: readonly string[]): readonly TokenPriceField[] {
  if (!families.some((family) => TOKEN_FAMILIES.has(family))) return [];
  if (families.every((family) => INPUT_ONLY_FAMILIES.has(family)))
    return ['input_per_million_tokens'];
  return PRICE_FORM_FIELDS.map(([field]) => field);
}

export type Prices = Record<string, unknown>;

/** JSON text as a prices object, or `null` when it is not a JSON object. */
export function parsePricesJson(text: string): Prices | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Prices)
    : null;
}

/** Prices as the JSON view shows them. */
export function pricesJson(prices: Prices): string {
  return JSON.stringify(prices, null, 2);
}

/**
 * What a field's input shows for `prices`: exact yuan (`2500000` → `2.5`), `''` when the field is
 * absent. A value that is not a whole micro-yuan shows as text `parseYuan` refuses (`1.5` →
 * `0.0000015`, too many decimals; a string as its JSON, `"7"`), never as yuan that would save a
 * different value than the JSON holds: its input says why, and saving is refused.
 */
export function fieldText(prices: Prices, field: TokenPriceField): string {
  const value = prices[field];
  if (value === undefined) return '';
  if (typeof value !== 'number') return JSON.stringify(value);
  if (Number.isSafeInteger(value)) return yuanInputText(value);
  const written = String(value);
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(written);
  if (match === null) return written;
  // The decimal point moved six places left on the digits: no arithmetic on the float.
  const [, sign = '', whole = '', fraction = ''] = match;
  const padded = whole.padStart(7, '0');
  const yuanWhole = padded.slice(0, -6).replace(/^0+(?=\d)/, '');
  const yuanFraction = `${padded.slice(-6)}${fraction}`.replace(/0+$/, '');
  return `${sign}${yuanWhole}${yuanFraction === '' ? '' : `.${yuanFraction}`}`;
}

/** Each of `fields`' input text for `prices`. */
export function fieldTexts(
  prices: Prices,
  fields: readonly TokenPriceField[],
): Partial<Record<TokenPriceField, string>> {
  return Object.fromEntries(fields.map((field) => [field, fieldText(prices, field)]));
}

/** A field's typed yuan: `null` when empty (the field is left out), else `parseYuan`'s answer. */
export function parseField(text: string): ParsedAmount | null {
  return text.trim() === '' ? null : parseYuan(text, PRICE_RULE);
}

/**
 * `prices` with `field` as `text` says: its micro-yuan when the yuan parse, left out when the
 * text is empty; unchanged when the text is refused (the input says why, and saving is refused).
 * The other fields, and the keys' order, are kept.
 */
export function withField(prices: Prices, field: TokenPriceField, text: string): Prices {
  const parsed = parseField(text);
  if (parsed === null) {
    const { [field]: _removed, ...rest } = prices;
    void _removed;
    return rest;
  }
  if (!parsed.ok) return prices;
  return { ...prices, [field]: parsed.micro };
}
