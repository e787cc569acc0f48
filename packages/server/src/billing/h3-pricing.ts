import type { ModelConfig, ModelPrices, H3Resolution } from '../config/schema.js';
import { H3_FREE_REFERENCE_IMAGES } from '../config/price-rules.js';
import {
  finishActual,
  finishQuote,
  optional,
  referenceItem,
  referenceQuote,
  roundUpSeconds,
  type ActualAmount,
  type DraftItem,
  type Quote,
} from './task-pricing.js';

/**
 * Prices of H3 tasks (docs/h3.md, "Billing"; spec 4.4). Pure functions, like task-pricing.ts.
 *
 * Video actions (`generate`, `regenerate`): the combined seconds of input audio, input video and
 * output video, measured to the millisecond and rounded up once to a whole second, at the
 * per-second price of the output resolution (with audio when audio is made), plus reference
 * images beyond the first 5. The quote counts the output seconds asked; the bill the seconds of
 * the delivered file (never more than asked), so a bill never exceeds its quote.
 *
 * `understand`: input and output tokens at the token prices, each rounded up to the micro-yuan.
 * The quote holds the worst case (the prompt's UTF-8 bytes plus `video_input_tokens` for the
 * video, and `max_output_tokens`); the bill counts what the upstream reports, capped at it.
 */

const PER_MILLION = 1_000_000;

/** A video action's input, priced: defaults filled in, media measured. */
export interface H3VideoPricing {
  readonly action: 'generate' | 'regenerate';
  readonly resolution: string;
  readonly generateAudio: boolean;
  /** Output seconds asked. */
  readonly duration: number;
  readonly referenceImages: number;
  /** Milliseconds of the input audio and input video (assets' own files; the source task's video). */
  readonly inputAudioMs: number;
  readonly inputVideoMs: number;
}

export interface H3UnderstandPricing {
  readonly action: 'understand';
  readonly maxInputTokens: number;
  readonly maxOutputTokens: number;
}

export type H3Pricing = H3VideoPricing | H3UnderstandPricing;

/** The resolutions a model prices (its offer), in the order of the spec's list. */
export function offeredResolutions(prices: ModelPrices): H3Resolution[] {
  const order: H3Resolution[] = ['480p', '720p', '1080p', '2K'];
  return order.filter((resolution) => prices.h3_per_second?.[resolution] !== undefined);
}

function secondPrice(prices: ModelPrices, resolution: string, withAudio: boolean) {
  const table = withAudio ? prices.h3_per_second_with_audio : prices.h3_per_second;
  return table?.[resolution as H3Resolution];
}

function secondsItem(
  input: H3VideoPricing,
  unitPrice: number,
  outputMs: number,
  withAudio: boolean,
): DraftItem {
  const seconds = roundUpSeconds((input.inputAudioMs + input.inputVideoMs + outputMs) / 1000);
  return {
    name: 'video_second',
    quantity: seconds,
    unitPrice,
    charged: seconds,
    detail: `${input.resolution}${withAudio ? ' with audio' : ''}: input audio + input video + output, rounded up`,
    measured: {
      input_audio_seconds: input.inputAudioMs / 1000,
      input_video_seconds: input.inputVideoMs / 1000,
      output_seconds: outputMs / 1000,
    },
  };
}

/** The quote of a video action; `closed` holds the combination's closed reasons already found. */
export function quoteH3Video(
  model: ModelConfig,
  prices: ModelPrices,
  input: H3VideoPricing,
  closed: string[],
): Quote {
  const offered = offeredResolutions(prices);
  if (!offered.includes(input.resolution as H3Resolution))
    closed.push(
      `resolution ${input.resolution} is not offered by ${model.id}; offered: ${offered.join(', ') || 'none'}`,
    );
  if (!model.video_seconds.includes(input.duration))
    closed.push(
      `duration ${input.duration} is not offered by ${model.id}; offered: ${model.video_seconds.join(', ')}`,
    );
  if (input.generateAudio && !model.generate_audio)
    closed.push(`generate_audio is not offered by ${model.id}`);
  const unitPrice = secondPrice(prices, input.resolution, input.generateAudio);
  if (unitPrice === undefined && offered.includes(input.resolution as H3Resolution))
    closed.push(
      `${model.id} has no price for ${input.resolution}${input.generateAudio ? ' with audio' : ''}`,
    );
  const references = referenceQuote(
    model,
    prices,
    input.referenceImages,
    closed,
    H3_FREE_REFERENCE_IMAGES,
  );
  const items: DraftItem[] = [];
  if (unitPrice !== undefined)
    items.push(secondsItem(input, unitPrice, input.duration * 1000, input.generateAudio));
  if (references !== undefined) items.push(references);
  return finishQuote(items, closed);
}

/** The worst case of an `understand`: every token it may read and write. */
export function quoteH3Understand(prices: ModelPrices, input: H3UnderstandPricing): Quote {
  return finishQuote(tokenItems(prices, input.maxInputTokens, input.maxOutputTokens), []);
}

/**
 * The bill of a video action, at the task's own price version: `outputMs` is the delivered
 * file's duration (or, for a billed failure, the seconds the upstream billed), capped at the
 * seconds asked. Nothing delivered and nothing billed: 0 (the hold is released), input seconds
 * and reference images included.
 */
export function actualH3Video(
  prices: ModelPrices,
  input: H3VideoPricing,
  report: { readonly outputMs: number; readonly billedFailure: boolean },
): ActualAmount {
  if (!Number.isFinite(report.outputMs) || report.outputMs < 0)
    throw new Error(`output milliseconds must be finite and >= 0, got ${report.outputMs}`);
  const outputMs = Math.min(Math.round(report.outputMs), input.duration * 1000);
  const unitPrice = secondPrice(prices, input.resolution, input.generateAudio);
  if (unitPrice === undefined)
    throw new Error(`no H3 per-second price for ${input.resolution} in these prices`);
  const items: DraftItem[] =
    outputMs === 0
      ? []
      : [
          secondsItem(input, unitPrice, outputMs, input.generateAudio),
          ...optional(referenceItem(prices, input.referenceImages, H3_FREE_REFERENCE_IMAGES)),
        ];
  const what = report.billedFailure ? 'billed for a failure' : 'delivered';
  return finishActual(items, {
    head: `h3 ${input.action}: ${report.outputMs / 1000} s ${what}`,
    exceeded: report.outputMs > input.duration * 1000,
    cap: `${input.duration} s asked`,
  });
}

/** The bill of an `understand`: the tokens the upstream reports, each capped at the worst case held. */
export function actualH3Understand(
  prices: ModelPrices,
  input: H3UnderstandPricing,
  tokens: { readonly input: number; readonly output: number },
): ActualAmount {
  for (const [what, count] of Object.entries(tokens))
    if (!Number.isSafeInteger(count) || count < 0)
      throw new Error(`${what} tokens must be a whole number >= 0, got ${count}`);
  const read = Math.min(tokens.input, input.maxInputTokens);
  const written = Math.min(tokens.output, input.maxOutputTokens);
  const exceeded = tokens.input > input.maxInputTokens || tokens.output > input.maxOutputTokens;
  return finishActual(read + written === 0 ? [] : tokenItems(prices, read, written), {
    head: `h3 understand: ${tokens.input} input and ${tokens.output} output tokens reported`,
    exceeded,
    cap: `${input.maxInputTokens} input and ${input.maxOutputTokens} output tokens held`,
  });
}

function tokenItems(prices: ModelPrices, input: number, output: number): DraftItem[] {
  const inputPrice = prices.input_per_million_tokens;
  const outputPrice = prices.output_per_million_tokens;
  if (inputPrice === undefined || outputPrice === undefined)
    throw new Error('an h3 model has input and output token prices (price-rules.ts)');
  return [
    {
      name: 'input_token',
      quantity: input,
      unitPrice: inputPrice,
      charged: input,
      perUnits: PER_MILLION,
      detail: 'per 1M input tokens, rounded up',
    },
    {
      name: 'output_token',
      quantity: output,
      unitPrice: outputPrice,
      charged: output,
      perUnits: PER_MILLION,
      detail: 'per 1M output tokens, rounded up',
    },
  ];
}
