import type { Model } from './compat.js';
import type { MicroYuan } from './money.js';

/** An H3 output resolution (spec 4.4; `regenerate` is 2K only). */
export type H3PriceResolution = '480p' | '720p' | '1080p' | '2K';

/**
 * An H3 model's video-action prices (docs/h3.md, "Billing"): micro-yuan per second of input
 * audio + input video + output video, by output resolution. `understand` is billed on the token
 * prices of `pricing`; reference images beyond `free_reference_images` at
 * `pricing.per_reference_image`.
 */
export interface H3ModelPricing {
  h3_per_second?: Partial<Record<H3PriceResolution, MicroYuan>>;
  /** With generated audio (`regenerate` always); replaces `h3_per_second`. */
  h3_per_second_with_audio?: Partial<Record<H3PriceResolution, MicroYuan>>;
  /** Reference images per task that cost nothing (spec 8). */
  free_reference_images: number;
}

/**
 * One model of the console's models page: the entry `GET /v1/models` gives a key that may call
 * it, plus an H3 model's video-action prices (which `pricing` does not carry), of the same price
 * version.
 */
export interface ConsoleModel extends Model {
  h3_pricing?: H3ModelPricing;
}

/**
 * `GET /console/api/models/callable` (docs/console.md, "Models page"): the models the member's
 * keys may call. `basis` says which rule gave the list: `keys`, the union of what the account's
 * usable keys (not disabled, not expired) may call (a key without an allowlist: every model);
 * `new_key`, when the account has no usable key, what a new key may be allowed (every model).
 */
export interface ConsoleModelList {
  object: 'list';
  basis: 'keys' | 'new_key';
  data: ConsoleModel[];
}
