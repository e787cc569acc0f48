import { MAX_MOVEMENT_MICRO_YUAN, type LineItem } from '@tollgate/protocol';
import type { ModelConfig, ModelPrices } from '../config/schema.js';
import type { ActualAmount } from './actual-amount.js';

/**
 * Prices of image and video tasks (docs/billing.md, "Images and videos"). Pure functions: the
 * caller brings the model, the prices of one price version and the input; nothing here reads a
 * clock, a database or the network.
 *
 * Two moments:
 * - the quote (`quoteImage`, `quoteVideo`): what the request will cost if the upstream delivers
 *   everything asked; it is the hold. A combination that is not open gives `closedReasons` and
 *   no amount.
 * - the actual amount (`actualImage`, `actualVideo`): what the upstream delivered, by its own
 *   report, at the quote's prices. It never exceeds the quote: delivery beyond what was asked
 *   is not billed (the rule says so), so the capture always fits in the hold.
 *
 * Money is integer micro-yuan throughout; products are taken in BigInt and checked against
 * MAX_MOVEMENT_MICRO_YUAN before they become numbers.
 */

/**
 * One line of a quote or a bill (the wire type: snake case, as it goes on the wire), and what a
 * bill comes to (billing/actual-amount.ts).
 */
export type { LineItem, ActualAmount };

export interface Quote {
  /** The hold to take; `null` when `closedReasons` is not empty. */
  readonly quotedAmount: number | null;
  readonly lineItems: LineItem[];
  /** Why this combination cannot be submitted, one sentence each; empty when it can. */
  readonly closedReasons: string[];
}

export interface ImageQuote extends Quote {
  /** The input as priced, defaults filled in: store it with the task and price the bill on it. */
  readonly input: QuotedImageInput;
}

export interface VideoQuote extends Quote {
  readonly input: QuotedVideoInput;
}

export interface ImageInput {
  /** Images asked (`n`); default 1. */
  readonly n?: number | undefined;
  /** Default: the model's first `image_sizes`, else its smallest priced size. */
  readonly size?: string | undefined;
  /** Default: the model's first `image_qualities`, else `standard`. */
  readonly quality?: string | undefined;
  /** Reference images given (`assetIds`). */
  readonly referenceImages: number;
}

export interface QuotedImageInput {
  readonly n: number;
  readonly size: string;
  readonly quality: string;
  readonly referenceImages: number;
}

export interface VideoInput {
  /** Whole seconds asked; default: the model's first `video_seconds`. */
  readonly seconds?: number | undefined;
  /** Default: the model's first `video_sizes`, else its smallest priced size. */
  readonly size?: string | undefined;
  readonly generateAudio?: boolean | undefined;
  readonly referenceImages: number;
}

export interface QuotedVideoInput {
  readonly seconds: number;
  readonly size: string;
  readonly generateAudio: boolean;
  readonly referenceImages: number;
}

export const QUOTE_TOO_LARGE = `the quote exceeds the largest single charge (${MAX_MOVEMENT_MICRO_YUAN} micro-yuan)`;
const DEFAULT_QUALITY = 'standard';

/** The sizes an image request may name: `image_sizes`, else every priced size, smallest first. */
export function offeredImageSizes(model: ModelConfig, prices: ModelPrices): string[] {
  return model.image_sizes ?? bySmallestArea(Object.keys(prices.per_image ?? {}));
}

/** The qualities offered at `size`: `image_qualities` (in its order) that are priced there. */
export function offeredImageQualities(
  model: ModelConfig,
  prices: ModelPrices,
  size: string,
): string[] {
  const priced = Object.keys(prices.per_image?.[size] ?? {});
  return model.image_qualities?.filter((quality) => priced.includes(quality)) ?? priced;
}

/** The sizes a video request may name: `video_sizes`, else every priced size, smallest first. */
export function offeredVideoSizes(model: ModelConfig, prices: ModelPrices): string[] {
  return model.video_sizes ?? bySmallestArea(Object.keys(prices.per_second ?? {}));
}

export function quoteImage(
  model: ModelConfig,
  prices: ModelPrices,
  request: ImageInput,
): ImageQuote {
  const perImage = prices.per_image ?? {};
  const offeredSizes = offeredImageSizes(model, prices);
  const input: QuotedImageInput = {
    n: request.n ?? 1,
    size: request.size ?? offeredSizes[0] ?? '',
    quality: request.quality ?? model.image_qualities?.[0] ?? DEFAULT_QUALITY,
    referenceImages: request.referenceImages,
  };
  const closed: string[] = [];
  const countable = Number.isSafeInteger(input.n) && input.n >= 1;
  if (!countable) closed.push(`n must be a whole number of images, at least 1 (got ${input.n})`);
  else if (input.n > model.max_images)
    closed.push(`n ${input.n} is above the most ${model.id} makes at once (${model.max_images})`);

  let unitPrice: number | undefined;
  if (!offeredSizes.includes(input.size)) {
    closed.push(
      `size ${input.size} is not offered by ${model.id}; offered: ${offeredSizes.join(', ') || 'none'}`,
    );
  } else {
    const offeredQualities = offeredImageQualities(model, prices, input.size);
    unitPrice = perImage[input.size]?.[input.quality];
    if (!offeredQualities.includes(input.quality) || unitPrice === undefined) {
      unitPrice = undefined;
      closed.push(
        `quality ${input.quality} is not offered by ${model.id} at ${input.size}; offered: ${offeredQualities.join(', ') || 'none'}`,
      );
    }
  }
  const references = referenceQuote(model, prices, input.referenceImages, closed);
  const items: DraftItem[] = [];
  if (unitPrice !== undefined && countable)
    items.push({
      name: 'image',
      quantity: input.n,
      unitPrice,
      charged: input.n,
      detail: `${input.size} ${input.quality}`,
    });
  if (references !== undefined) items.push(references);
  return { ...finishQuote(items, closed), input };
}

export function quoteVideo(
  model: ModelConfig,
  prices: ModelPrices,
  request: VideoInput,
): VideoQuote {
  const offeredSizes = offeredVideoSizes(model, prices);
  const input: QuotedVideoInput = {
    seconds: request.seconds ?? model.video_seconds[0] ?? 0,
    size: request.size ?? offeredSizes[0] ?? '',
    generateAudio: request.generateAudio ?? false,
    referenceImages: request.referenceImages,
  };
  const closed: string[] = [];
  if (!model.video_seconds.includes(input.seconds))
    closed.push(
      `seconds ${input.seconds} is not offered by ${model.id}; offered: ${model.video_seconds.join(', ')}`,
    );
  if (input.generateAudio && !model.generate_audio)
    closed.push(`generate_audio is not offered by ${model.id}`);

  let unitPrice: number | undefined;
  if (!offeredSizes.includes(input.size)) {
    closed.push(
      `size ${input.size} is not offered by ${model.id}; offered: ${offeredSizes.join(', ') || 'none'}`,
    );
  } else {
    unitPrice = secondPrice(prices, input.size, input.generateAudio);
    if (unitPrice === undefined)
      closed.push(
        `${model.id} has no price for ${input.size}${input.generateAudio ? ' with audio' : ''}`,
      );
  }
  const references = referenceQuote(model, prices, input.referenceImages, closed);
  const items: DraftItem[] = [];
  if (unitPrice !== undefined && model.video_seconds.includes(input.seconds))
    items.push({
      name: 'video_second',
      quantity: input.seconds,
      unitPrice,
      charged: input.seconds,
      detail: `${input.size}${input.generateAudio ? ' with audio' : ''}`,
    });
  if (references !== undefined) items.push(references);
  return { ...finishQuote(items, closed), input };
}

export interface ImageReport {
  /** Images the upstream delivered (and we stored). */
  readonly imagesDelivered: number;
  /** The task failed and the upstream billed it anyway, for this many images. */
  readonly billedFailure?: { readonly images: number } | undefined;
}

/**
 * The actual amount of an image task: images delivered (at most the `n` asked) at the quoted
 * size and quality, plus the reference images as quoted. Nothing delivered and no billed
 * failure: 0, reference images included (the caller releases the hold).
 * `prices` must be the quote's price version. Throws on a report that is not a count (the
 * adapter checks it at the boundary) or on prices that cannot price the quoted input.
 */
export function actualImage(
  prices: ModelPrices,
  input: QuotedImageInput,
  report: ImageReport,
): ActualAmount {
  const reported = report.billedFailure?.images ?? report.imagesDelivered;
  assertCount(reported, 'images reported');
  const billed = Math.min(reported, input.n);
  const unitPrice = prices.per_image?.[input.size]?.[input.quality];
  if (unitPrice === undefined)
    throw new Error(`no per_image price for ${input.size} ${input.quality} in these prices`);
  const detail = `${input.size} ${input.quality}`;
  const items: DraftItem[] =
    billed === 0
      ? []
      : [
          { name: 'image', quantity: billed, unitPrice, charged: billed, detail },
          ...optional(referenceItem(prices, input.referenceImages)),
        ];
  const what = report.billedFailure === undefined ? 'delivered' : 'billed for a failure';
  return finishActual(items, {
    head: `image: ${reported} ${what}`,
    exceeded: reported > input.n,
    cap: `${input.n} asked`,
  });
}

export interface VideoReport {
  /** Seconds of video the upstream delivered (the stored file's duration; may be fractional). */
  readonly secondsDelivered: number;
  /** Whether the delivered video has generated audio. */
  readonly audio: boolean;
  /** The task failed and the upstream billed it anyway, for this many seconds. */
  readonly billedFailure?: { readonly seconds: number } | undefined;
}

/**
 * The actual amount of a video task: seconds delivered, measured to the millisecond and
 * rounded UP to a whole second (at most the seconds asked), at the quoted size's per-second
 * price — with audio only when audio was asked and delivered — plus the reference images as
 * quoted. Nothing delivered and no billed failure: 0. `prices` must be the quote's price
 * version; throws on a report that is not a finite non-negative number of seconds.
 */
export function actualVideo(
  prices: ModelPrices,
  input: QuotedVideoInput,
  report: VideoReport,
): ActualAmount {
  const reportedSeconds = report.billedFailure?.seconds ?? report.secondsDelivered;
  if (!Number.isFinite(reportedSeconds) || reportedSeconds < 0)
    throw new Error(`seconds reported must be a finite number >= 0, got ${reportedSeconds}`);
  const wholeSeconds = roundUpSeconds(reportedSeconds);
  const billed = Math.min(wholeSeconds, input.seconds);
  const withAudio = input.generateAudio && report.audio;
  const unitPrice = secondPrice(prices, input.size, withAudio);
  if (unitPrice === undefined)
    throw new Error(`no per-second price for ${input.size} in these prices`);
  const detail = `${input.size}${withAudio ? ' with audio' : ''}`;
  const items: DraftItem[] =
    billed === 0
      ? []
      : [
          { name: 'video_second', quantity: billed, unitPrice, charged: billed, detail },
          ...optional(referenceItem(prices, input.referenceImages)),
        ];
  const what = report.billedFailure === undefined ? 'delivered' : 'billed for a failure';
  return finishActual(items, {
    head: `video: ${reportedSeconds} s ${what}, rounded up to ${wholeSeconds} s`,
    exceeded: wholeSeconds > input.seconds,
    cap: `${input.seconds} s asked`,
  });
}

/**
 * Whole seconds billed for a duration: to the millisecond first (so 4.0000000001 s of float
 * noise is 4 s, not 5), then up to the next whole second (4.001 s is 5 s).
 */
export function roundUpSeconds(seconds: number): number {
  return Math.ceil(Math.round(seconds * 1000) / 1000);
}

/**
 * A line item before its amount: `charged` of `quantity` units cost `unitPrice` each (per
 * `perUnits` units when given: tokens, rounded up to the next micro-yuan).
 */
export interface DraftItem {
  readonly name: LineItem['name'];
  readonly quantity: number;
  readonly unitPrice: number;
  readonly charged: number;
  readonly detail: string;
  readonly perUnits?: number;
  readonly measured?: LineItem['measured'];
}

function secondPrice(prices: ModelPrices, size: string, withAudio: boolean): number | undefined {
  return withAudio ? prices.per_second_with_audio?.[size] : prices.per_second?.[size];
}

/**
 * Checks the reference count against the model; the line item when it is allowed and priced.
 * `free` is the model's `free_reference_images` (H3: the spec's fixed 5).
 */
export function referenceQuote(
  model: ModelConfig,
  prices: ModelPrices,
  count: number,
  closed: string[],
  free = prices.free_reference_images ?? 0,
): DraftItem | undefined {
  if (!Number.isSafeInteger(count) || count < 0) {
    closed.push(`reference images must be a whole number >= 0 (got ${count})`);
    return undefined;
  }
  if (count > model.max_reference_images) {
    closed.push(
      model.max_reference_images === 0
        ? `${model.id} takes no reference images (${count} given)`
        : `${count} reference images given; ${model.id} takes at most ${model.max_reference_images}`,
    );
    return undefined;
  }
  if (count > free && prices.per_reference_image === undefined) {
    closed.push(`${model.id} has no price for reference images beyond the first ${free}`);
    return undefined;
  }
  return referenceItem(prices, count, free);
}

/** Reference images: the first `allowance` (`free_reference_images`) cost nothing, the rest their price. */
export function referenceItem(
  prices: ModelPrices,
  count: number,
  allowance = prices.free_reference_images ?? 0,
): DraftItem | undefined {
  if (count === 0) return undefined;
  const free = Math.min(count, allowance);
  const unitPrice = prices.per_reference_image ?? 0;
  if (count > free && prices.per_reference_image === undefined)
    throw new Error('no per_reference_image price in these prices');
  return {
    name: 'reference_image',
    quantity: count,
    unitPrice,
    charged: count - free,
    detail: free === 0 ? 'none free' : `first ${free} free`,
  };
}

export function optional<T>(value: T | undefined): T[] {
  return value === undefined ? [] : [value];
}

/**
 * Amounts in BigInt: a quantity allowed by the configuration times a price up to the largest
 * movement can pass 2^53. Past MAX_MOVEMENT_MICRO_YUAN the quote is closed; its line amounts are
 * then shown as the nearest number (informative only: nothing is charged on them).
 */
function priceItems(items: readonly DraftItem[]): { lineItems: LineItem[]; total: bigint } {
  let total = 0n;
  const lineItems = items.map((item): LineItem => {
    const product = BigInt(item.charged) * BigInt(item.unitPrice);
    const per = BigInt(item.perUnits ?? 1);
    const amount = (product + per - 1n) / per;
    total += amount;
    const free = item.quantity - item.charged;
    return {
      name: item.name,
      quantity: item.quantity,
      ...(item.name === 'reference_image' ? { free_quantity: free } : {}),
      unit_price: item.unitPrice,
      ...(item.perUnits === undefined ? {} : { per_units: item.perUnits }),
      amount: Number(amount),
      detail: item.detail,
      ...(item.measured === undefined ? {} : { measured: item.measured }),
    };
  });
  return { lineItems, total };
}

export function finishQuote(items: readonly DraftItem[], closed: string[]): Quote {
  const { lineItems, total } = priceItems(items);
  if (total > BigInt(MAX_MOVEMENT_MICRO_YUAN)) closed.push(QUOTE_TOO_LARGE);
  return {
    quotedAmount: closed.length === 0 ? Number(total) : null,
    lineItems,
    closedReasons: closed,
  };
}

export function finishActual(
  items: readonly DraftItem[],
  context: { head: string; exceeded: boolean; cap: string },
): ActualAmount {
  const { lineItems, total } = priceItems(items);
  // Never reached with the quote's prices: the bill is at most the quote, which was bounded.
  if (total > BigInt(MAX_MOVEMENT_MICRO_YUAN))
    throw new Error(`actual amount ${total} exceeds the largest single charge`);
  const amount = Number(total);
  const parts = lineItems.map(
    (item) =>
      `${item.name} ${item.quantity - (item.free_quantity ?? 0)} x ${item.unit_price}${item.per_units === undefined ? '' : ` / ${item.per_units}`} = ${item.amount}`,
  );
  const cap = context.exceeded ? ` (more than the ${context.cap}: billed the ${context.cap})` : '';
  const rule =
    amount === 0 && lineItems.length === 0
      ? `${context.head}${cap}: nothing billed`
      : `${context.head}${cap}: ${parts.join(' + ')} = ${amount} micro-yuan`;
  return { amount, lineItems, rule, reportExceededRequest: context.exceeded };
}

function assertCount(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`${what} must be a whole number >= 0, got ${value}`);
}

/** Sizes smallest first (by pixels, then width), so a default size is the cheapest kind. */
function bySmallestArea(sizes: readonly string[]): string[] {
  const area = (size: string) => {
    const [width = 0, height = 0] = size.split('x').map(Number);
    return [width * height, width] as const;
  };
  return [...sizes].sort((left, right) => {
    const [leftArea, leftWidth] = area(left);
    const [rightArea, rightWidth] = area(right);
    return leftArea - rightArea || leftWidth - rightWidth;
  });
}
