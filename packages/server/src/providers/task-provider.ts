import type { Readable } from 'node:stream';

/**
 * The task provider contract (version 1), beside chat, embeddings and rerank: an upstream that
 * makes images or videos. A provider parses every upstream body with a schema at the boundary
 * and keeps the upstream's ids apart from ours.
 *
 * Failures:
 * - `submit` throws `UpstreamFailure`: `failed` when nothing can have been accepted (refused,
 *   not sent), `unknown` when the submission may have been accepted without our hearing of it.
 * - `poll`, `lookup` and output reads throw anything on trouble: they are reads, the worker
 *   retries them later and never changes a task's state because one failed.
 */
export interface TaskInput {
  readonly kind: 'image' | 'video';
  /** The model name sent upstream. */
  readonly upstreamModel: string;
  readonly prompt: string;
  readonly size: string;
  /** Images: how many; videos: 1. */
  readonly n: number;
  readonly quality: string | undefined;
  /** Videos: seconds asked. */
  readonly seconds: number | undefined;
  readonly generateAudio: boolean;
  /**
   * The caller's reference images (`assetIds`), read from storage: sent as data URIs in
   * `reference_images` (the JSON convention Tollgate's OpenAI-compatible adapters use).
   */
  readonly references: readonly { readonly mediaType: string; readonly bytes: Buffer }[];
}

/** The H3 actions (spec 4.4): `generate` and `regenerate` make a video, `understand` returns text. */
export type H3Action = 'generate' | 'regenerate' | 'understand';

/** What a reference asset is to an H3 task (its `role`), by the kind of media it must be. */
export type H3Role =
  'first_frame' | 'last_frame' | 'reference_image' | 'reference_video' | 'reference_audio';

/**
 * An H3 task as the upstream is sent it (docs/h3.md, "The upstream protocol"): a content
 * generation task with a text item and one item per reference (the caller's assets, and for
 * `regenerate` and `understand` from a task, the source task's delivered video as
 * `reference_video`). The upstream model is chosen per action by the configuration.
 */
export interface H3TaskInput {
  readonly kind: 'h3';
  readonly action: H3Action;
  readonly upstreamModel: string;
  /** Absent for `regenerate` (spec 4.4: no prompt when regenerating from a source task). */
  readonly prompt: string | undefined;
  /** Video actions: `480p`, `720p`, `1080p`, `2K` (as the model offers); absent for `understand`. */
  readonly resolution: string | undefined;
  /** Video actions: `W:H`; absent for `understand`. */
  readonly ratio: string | undefined;
  /** Seconds: of the video to make, or (understand) of the video to watch. */
  readonly duration: number;
  readonly generateAudio: boolean;
  readonly watermark: boolean;
  /** In the order given; bytes read from storage, sent as data URIs. */
  readonly references: readonly {
    readonly role: H3Role;
    readonly mediaType: string;
    readonly bytes: Buffer;
  }[];
}

/** What any task provider is given to submit. */
export type ProviderTaskInput = TaskInput | H3TaskInput;

/** What the upstream reports it delivered: the actual amount is priced from this, never from the request. */
export interface DeliveryReport {
  readonly imagesDelivered: number;
  /** Video seconds delivered (or, for a billed failure, billed). */
  readonly secondsDelivered: number;
  /** A failure the upstream bills (the task then awaits settlement of that amount). */
  readonly billedFailure: boolean;
  /** H3 `understand`: the tokens the upstream reports it read and wrote. */
  readonly tokens?: { readonly input: number; readonly output: number } | undefined;
}

/** One output to store: opened only when the worker stores it (streamed, never buffered whole). */
export interface TaskOutputSource {
  open(signal?: AbortSignal): Promise<{ body: Readable; mediaType: string | null }>;
  /**
   * The URL the upstream gave for it, when it has one: kept on the task while storing keeps
   * failing, and opened again through the provider's `resultSource` (docs/tasks.md "Downloads").
   */
  readonly url?: string | undefined;
  /**
   * When the upstream stops serving it (ms since the epoch), where the upstream says so (Ark's
   * pre-signed result URLs: 24 hours). Past it the output can never be stored: the kernel then
   * fails the task instead of downloading — nothing delivered, nothing charged
   * (docs/h3-upstream.md, "Ark's windows"). Absent: no known end, a failed download is retried
   * as usual.
   */
  readonly expiresAt?: number | undefined;
}

export type SubmitResult =
  /** Accepted for later work: poll with this id. */
  | { readonly kind: 'accepted'; readonly upstreamTaskId: string }
  /** A synchronous upstream (OpenAI Images) answered with the result itself. */
  | {
      readonly kind: 'completed';
      readonly upstreamTaskId: string | null;
      readonly outputs: readonly TaskOutputSource[];
      readonly report: DeliveryReport;
    };

export type PollResult =
  | { readonly kind: 'pending'; readonly progress: number | null }
  | {
      readonly kind: 'completed';
      readonly outputs: readonly TaskOutputSource[];
      readonly report: DeliveryReport;
      /** H3 `understand`: the answer (checked: a bounded string). */
      readonly text?: string | undefined;
    }
  | {
      readonly kind: 'failed';
      readonly code: string;
      readonly message: string;
      readonly report: DeliveryReport;
    };

export interface TaskProvider {
  /**
   * Submits once. `idempotencyKey` is our task id: an upstream that honours `Idempotency-Key`
   * answers a repeat with the original, but the worker never relies on that to send twice.
   */
  submit(
    input: ProviderTaskInput,
    idempotencyKey: string,
    signal?: AbortSignal,
  ): Promise<SubmitResult>;
  /**
   * A read-only look-up of a submission whose answer never came, by the idempotency key sent
   * with it: the upstream's task id, or null if it has none. Absent when the upstream cannot be
   * asked (the task then waits for an operator).
   */
  readonly lookup:
    ((idempotencyKey: string, signal?: AbortSignal) => Promise<string | null>) | undefined;
  poll(upstreamTaskId: string, signal?: AbortSignal): Promise<PollResult>;
  /**
   * How long after its submission the upstream answers polls of a task, when it documents a
   * limit (Volcengine Ark: 7 days). Past it a running task is not polled again: the answer can
   * no longer say what became of it, so the task goes to the operator queue
   * (`submission_unknown`, its hold kept; docs/h3-upstream.md, "Ark's windows"). Absent: no
   * limit.
   */
  readonly queryRetentionMs?: number | undefined;
  /**
   * The source of an output the upstream gave as `url`, opened as its answer's own would be
   * (a result URL kept on a task whose download failed, retried without asking the upstream
   * again). Absent when the upstream never answers with URLs.
   */
  readonly resultSource?: ((url: string) => TaskOutputSource) | undefined;
}
