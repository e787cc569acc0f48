import type { Currency, MicroYuan } from './money.js';

/**
 * One line of a quote or of a task's bill (docs/billing.md, "Images and videos"):
 * `amount = (quantity - free_quantity) * unit_price`.
 */
export interface LineItem {
  /**
   * What is counted: images, seconds of video (H3: input audio and video plus output, together),
   * reference images given, or (H3 `understand`) input and output tokens.
   */
  name: 'image' | 'video_second' | 'reference_image' | 'input_token' | 'output_token';
  /** How many units were asked (in a quote) or delivered (in a bill). */
  quantity: number;
  /**
   * Of `quantity`, how many cost nothing (reference images within the model's free allowance).
   * Present on `reference_image` lines only (0 when none is free).
   */
  free_quantity?: number;
  /** Price of one unit (of `per_units` units, when given), micro-yuan. */
  unit_price: MicroYuan;
  /**
   * Tokens only: `unit_price` is per this many (1 000 000); the amount is rounded up to the next
   * micro-yuan.
   */
  per_units?: number;
  /**
   * What this line costs, micro-yuan: `(quantity - free_quantity) * unit_price`, or for token
   * lines `ceil(quantity * unit_price / per_units)`.
   */
  amount: MicroYuan;
  /**
   * H3 video lines: the seconds measured, before rounding up to the whole seconds of `quantity`:
   * input audio and input video (from the assets' own files) and output (asked, in a quote;
   * the delivered file's, in a bill).
   */
  measured?: { input_audio_seconds: number; input_video_seconds: number; output_seconds: number };
  /** What was priced, for people: `1024x1024 hd`, `640x360 with audio`, `first 1 free`. */
  detail: string;
}

/**
 * The answer of `POST /v1/images/quote` and `POST /v1/videos/quote` (200; read-only: nothing is
 * recorded, held or created). Echo `price_version` and `quoted_amount` at creation as
 * `expected_price_version` and `expected_quote_amount` to be refused (409 `PRICE_CHANGED` when
 * the price version moved, 409 `QUOTE_MISMATCH` when the amount is not this input's quote)
 * rather than charged a changed price.
 */
export interface Quote {
  object: 'quote';
  /** The public model id priced. */
  model: string;
  /**
   * What creation would hold, micro-yuan: a positive safe integer when the combination is open;
   * `null` when it is not (then `closed_reasons` says why, and creation is refused).
   */
  quoted_amount: MicroYuan | null;
  currency: Currency;
  /** `<model>@<version>` of the prices used. */
  price_version: string;
  /**
   * How `quoted_amount` adds up: their `amount`s sum to it. On a closed quote they show what
   * could be priced, for information only.
   */
  line_items: LineItem[];
  /** Why this combination cannot be created, one sentence each; empty when it can. */
  closed_reasons: string[];
}
