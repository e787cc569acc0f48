import { Readable } from 'node:stream';
import { z } from 'zod';
import type { GuardedFetchDeps } from '../../net/guarded-fetch.js';
import { resultUrlSource } from '../result-url.js';
import type { SubmitResult, TaskInput, TaskOutputSource, TaskProvider } from '../task-provider.js';
import { parseUpstream, unverifiableBody } from '../upstream-error.js';
import type { UpstreamClient } from '../upstream-http.js';
import { referenceImages } from './reference-images.js';

/** The largest image accepted from a result URL on another origin (streamed, metered). */
const MAX_FOREIGN_IMAGE_BYTES = 32 * 1024 * 1024;
/**
 * Labels accepted on a foreign image result. Storage CDNs often label images
 * `application/octet-stream`; the stored bytes are judged by their content afterwards anyway
 * (assets/output-writer.ts), so the label only keeps out what is plainly something else.
 */
const FOREIGN_IMAGE_TYPES = [
  'image/png',
  'image/jpeg',
  'image/webp',
  'application/octet-stream',
] as const;

/** How result URLs on another origin are fetched. */
export interface ForeignFetchOptions {
  /** The whole fetch (every hop, headers and body) must finish within this. */
  readonly timeoutMs: number;
  /** The network (tests inject a fake one). */
  readonly deps?: GuardedFetchDeps;
}

const responseSchema = z.object({
  data: z
    .array(z.union([z.object({ b64_json: z.string().min(1) }), z.object({ url: z.url() })]))
    .max(16),
});

/**
 * OpenAI-compatible Images (`POST /images/generations`): synchronous, so a submission either
 * returns the images or fails. Results come as base64 or as URLs; a URL on the upstream's own
 * origin is read with the upstream's client (its key), any other through the guarded fetch
 * (public https hosts only, PNG/JPEG/WebP, size-capped, streamed, bounded by
 * `foreignFetch.timeoutMs`). Delivered = the images in the answer, at most `n`.
 */
export class OpenAiImages implements TaskProvider {
  /** A synchronous answer has nothing to look up: an unanswered submission waits for an operator. */
  readonly lookup = undefined;

  constructor(
    private readonly http: UpstreamClient,
    /** The upstream's base URL: result URLs under it are read with `http`. */
    private readonly baseUrl: string,
    private readonly foreignFetch: ForeignFetchOptions,
  ) {}

  async submit(
    input: TaskInput,
    idempotencyKey: string,
    signal?: AbortSignal,
  ): Promise<SubmitResult> {
    const response = await this.http.postJson(
      '/images/generations',
      {
        model: input.upstreamModel,
        prompt: input.prompt,
        n: input.n,
        size: input.size,
        ...(input.quality === undefined ? {} : { quality: input.quality }),
        ...referenceImages(input),
      },
      signal,
      { 'idempotency-key': idempotencyKey },
    );
    const body = parseUpstream(
      responseSchema,
      response.json,
      response.upstreamRequestId,
      'images body',
    );
    if (body.data.length > input.n)
      throw unverifiableBody(
        response.upstreamRequestId,
        `${body.data.length} images delivered for ${input.n} asked`,
      );
    return {
      kind: 'completed',
      upstreamTaskId: response.upstreamRequestId,
      outputs: body.data.map((item) =>
        'b64_json' in item ? fromBase64(item.b64_json) : this.fromUrl(item.url),
      ),
      report: { imagesDelivered: body.data.length, secondsDelivered: 0, billedFailure: false },
    };
  }

  poll(): Promise<never> {
    return Promise.reject(new Error('images are synchronous: nothing to poll'));
  }

  /** A kept result URL, opened again as the answer's own (task-provider.ts `resultSource`). */
  readonly resultSource = (url: string): TaskOutputSource => this.fromUrl(url);

  private fromUrl(url: string): TaskOutputSource {
    return resultUrlSource(
      url,
      { http: this.http, baseUrl: this.baseUrl },
      {
        maxBytes: MAX_FOREIGN_IMAGE_BYTES,
        mediaTypes: FOREIGN_IMAGE_TYPES,
        timeoutMs: this.foreignFetch.timeoutMs,
        deps: this.foreignFetch.deps,
      },
    );
  }
}

function fromBase64(b64: string): TaskOutputSource {
  return {
    open: () =>
      Promise.resolve({ body: Readable.from([Buffer.from(b64, 'base64')]), mediaType: null }),
  };
}
