import type { H3Quote, H3Task, Quote, Task } from '@tollgate/protocol';
import type { H3, H3Input } from './resources/h3.js';
import type { ImageInput, TaskPostOptions, TaskResource, VideoInput } from './resources/tasks.js';

/** The quote a job echoes at creation, as journaled. */
export interface JobQuote {
  readonly quotedAmount: number;
  readonly priceVersion: string;
  /** H3 only: the quote's `input_digest`. */
  readonly inputDigest?: string;
}

/** A quote as a job judges it. */
export interface QuoteView {
  readonly amount: number | null;
  readonly closedReasons: readonly string[];
  readonly echo: JobQuote | undefined;
}

/** One delivered file: an asset of the caller, read with `client.download(contentPath)`. */
export interface DeliveredOutput {
  readonly assetId: string;
  readonly mediaType: string | undefined;
  /** Gateway path of the content (`/v1/…`; creating key; Range supported). */
  readonly contentPath: string;
}

/** What `generate` runs the steps of a family with (generate.ts). */
export interface Family<Input, T extends Task | H3Task> {
  readonly kind: 'image' | 'video' | 'h3';
  quote(input: Input, options: TaskPostOptions): Promise<QuoteView>;
  create(input: Input, quote: JobQuote, options: TaskPostOptions): Promise<T>;
  /** Reads the task; `refresh` for the waits of H3 (spec 4.4). */
  read(id: string, refresh: boolean): Promise<T>;
  settle(task: T, options: TaskPostOptions): Promise<T>;
  /** Files and text of a delivered task. */
  delivered(task: T): { outputs: DeliveredOutput[]; text?: string };
}

export function imageOrVideoFamily<Input extends ImageInput | VideoInput>(
  resource: TaskResource<Input>,
): Family<Input, Task> {
  return {
    kind: resource.family === 'images' ? 'image' : 'video',
    async quote(input, options) {
      return viewOf(await resource.quote(input, options));
    },
    create: (input, quote, options) =>
      resource.create(
        {
          ...input,
          expected_price_version: quote.priceVersion,
          expected_quote_amount: quote.quotedAmount,
        },
        options,
      ),
    read: (id) => resource.get(id),
    settle: (task, options) => resource.settle(task, options),
    delivered: (task) => ({
      outputs: (task.outputs ?? []).map((output) => ({
        assetId: output.asset_id,
        mediaType: output.media_type,
        contentPath: output.content_url,
      })),
    }),
  };
}

export function h3Family(resource: H3): Family<H3Input, H3Task> {
  return {
    kind: 'h3',
    async quote(input, options) {
      const quote = await resource.quote(input, options);
      return {
        ...viewOf(quote),
        echo:
          quote.quoted_amount === null
            ? undefined
            : {
                quotedAmount: quote.quoted_amount,
                priceVersion: quote.price_version,
                inputDigest: quote.input_digest,
              },
      };
    },
    create: (input, quote, options) => resource.submit(input, h3QuoteOf(input, quote), options),
    read: (id, refresh) => resource.get(id, { refresh }),
    settle: (task, options) => resource.settle(task, options),
    delivered: (task) => ({
      outputs:
        task.asset_id === undefined || task.content_path === undefined
          ? []
          : [{ assetId: task.asset_id, mediaType: 'video/mp4', contentPath: task.content_path }],
      ...(task.text === undefined ? {} : { text: task.text }),
    }),
  };
}

function viewOf(quote: Quote | H3Quote): QuoteView {
  return {
    amount: quote.quoted_amount,
    closedReasons: quote.closed_reasons,
    echo:
      quote.quoted_amount === null
        ? undefined
        : { quotedAmount: quote.quoted_amount, priceVersion: quote.price_version },
  };
}

/** The journaled echo as the quote `submit` takes (only its echoed fields are sent). */
function h3QuoteOf(input: H3Input, quote: JobQuote): H3Quote {
  return {
    object: 'h3.quote',
    model: input.model,
    action: input.action,
    input_digest: quote.inputDigest ?? '',
    price_version: quote.priceVersion,
    quoted_amount: quote.quotedAmount,
    currency: 'CNY_MICRO',
    line_items: [],
    closed_reasons: [],
  };
}
