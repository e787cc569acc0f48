import { z } from 'zod';
import type { GuardedFetchDeps } from '../../net/guarded-fetch.js';
import { resultUrlSource } from '../result-url.js';
import type {
  DeliveryReport,
  H3Role,
  H3TaskInput,
  PollResult,
  ProviderTaskInput,
  SubmitResult,
  TaskOutputSource,
  TaskProvider,
} from '../task-provider.js';
import { parseUpstream, unverifiableBody } from '../upstream-error.js';
import type { UpstreamClient } from '../upstream-http.js';
import { ARK_QUERY_RETENTION_MS, signedUrlExpiresAt } from './ark-service-rules.js';

const TASKS = '/contents/generations/tasks';
/** The largest video accepted from a result URL on another origin (streamed, metered). */
const MAX_FOREIGN_VIDEO_BYTES = 512 * 1024 * 1024;
/** Labels accepted on a foreign video; the stored bytes are probed afterwards anyway. */
const FOREIGN_VIDEO_TYPES = ['video/mp4', 'application/octet-stream'] as const;

const taskId = z.string().min(1).max(200);
const tokens = z.number().int().nonnegative().max(1_000_000_000);

const taskSchema = z.object({
  id: taskId,
  status: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled', 'expired']),
  /**
   * The output video's length (or on a billed failure what is billed): Ark reports `duration`
   * (seconds) or, for a task created with `frames`, `frames` at `framespersecond` — one of the
   * two, never both (videoSeconds).
   */
  duration: z.number().nonnegative().max(10_000).optional(),
  frames: z.number().int().nonnegative().max(10_000_000).optional(),
  framespersecond: z.number().int().positive().max(1_000).optional(),
  content: z
    .union([
      z.object({ video_url: z.url().max(8_192) }),
      /** Our extension: the answer of an `understand` task. */
      z.object({ text: z.string().max(100_000) }),
    ])
    .nullish(),
  usage: z
    .object({
      completion_tokens: tokens.optional(),
      total_tokens: tokens.optional(),
      /** Our extension: the tokens an `understand` task read. */
      prompt_tokens: tokens.optional(),
      /** Our extension: the upstream bills this failure. */
      billed: z.boolean().optional(),
    })
    .nullish(),
  error: z
    .object({
      code: z.string().max(100).optional(),
      message: z
        .string()
        .max(10_000)
        .transform((message) => message.slice(0, 1_000))
        .optional(),
    })
    .nullish(),
});
type Task = z.infer<typeof taskSchema>;

const acceptedSchema = z.object({ id: taskId });
const lookupSchema = z.object({
  items: z.array(z.object({ id: taskId })).max(10),
  total: z.number().int().nonnegative(),
});

/** The content item type of each role, and the field its data URI goes in. */
const ITEM_TYPE: Readonly<Record<H3Role, 'image_url' | 'video_url' | 'audio_url'>> = {
  first_frame: 'image_url',
  last_frame: 'image_url',
  reference_image: 'image_url',
  reference_video: 'video_url',
  reference_audio: 'audio_url',
};

/**
 * H3 over the Volcengine Ark content generation tasks shape (docs/h3-upstream.md):
 * `POST /contents/generations/tasks` with our task id as `Idempotency-Key`, `GET …/tasks/{id}`.
 * The action is the upstream model's (one model per action, chosen by the configuration).
 * References go as data URIs, in order, with their roles. A video result URL on the upstream's
 * own origin is read with the upstream's client (its key), any other through the guarded fetch
 * (public hosts only, size-capped, streamed, bounded by `timeoutMs`). A failure is billed only
 * when the upstream says so (`usage.billed`). `lookup` (a read-only
 * `GET …/tasks?idempotency_key=`) exists only for upstreams that offer it (the simulator): Ark's
 * own task list filters by its task ids, status and model, never by an id the client chose
 * (docs/tasks.md, "Look-up").
 *
 * Ark's own rules (ark-service-rules.ts): a task is answered for 7 days after its creation
 * (`queryRetentionMs`: the kernel stops polling then), and a result URL is pre-signed for 24
 * hours (each output's `expiresAt`, read from the URL: the kernel never downloads past it).
 */
export class ArkH3Tasks implements TaskProvider {
  readonly lookup: TaskProvider['lookup'];
  readonly queryRetentionMs = ARK_QUERY_RETENTION_MS;

  constructor(
    private readonly http: UpstreamClient,
    /** The upstream's base URL: result URLs under it are read with `http`. */
    private readonly baseUrl: string,
    private readonly options: {
      readonly lookup: boolean;
      /** A foreign result URL's whole fetch (every hop, headers and body) must finish within this. */
      readonly timeoutMs: number;
      /** The network for foreign result URLs (tests inject a fake one). */
      readonly guarded?: GuardedFetchDeps;
    },
  ) {
    this.lookup = options.lookup ? (key, signal) => this.find(key, signal) : undefined;
  }

  /** Throws a plain `Error` for a task that is not H3 (a wiring mistake, nothing was sent). */
  async submit(
    input: ProviderTaskInput,
    idempotencyKey: string,
    signal?: AbortSignal,
  ): Promise<SubmitResult> {
    if (input.kind !== 'h3') throw new Error(`ArkH3Tasks submits H3 tasks, not ${input.kind}`);
    const response = await this.http.postJson(TASKS, requestBody(input), signal, {
      'idempotency-key': idempotencyKey,
    });
    const accepted = parseUpstream(
      acceptedSchema,
      response.json,
      response.upstreamRequestId,
      'task submission body',
    );
    return { kind: 'accepted', upstreamTaskId: accepted.id };
  }

  /**
   * The task now. Throws (a read: the worker retries) on a body that does not parse, including
   * a success with neither a video nor a text, or a video without its length (`duration`, or
   * `frames` with `framespersecond`).
   */
  async poll(upstreamTaskId: string, signal?: AbortSignal): Promise<PollResult> {
    const response = await this.http.getJson(
      `${TASKS}/${encodeURIComponent(upstreamTaskId)}`,
      signal,
    );
    const task = parseUpstream(taskSchema, response.json, response.upstreamRequestId, 'task body');
    switch (task.status) {
      case 'queued':
      case 'running':
        return { kind: 'pending', progress: null };
      case 'cancelled':
      case 'expired':
        return {
          kind: 'failed',
          code: task.status,
          message: task.error?.message ?? `the upstream task was ${task.status}`,
          report: nothingDelivered,
        };
      case 'failed':
        return {
          kind: 'failed',
          code: task.error?.code ?? 'generation_failed',
          message: task.error?.message ?? 'the upstream could not complete the task',
          report: failureReport(task),
        };
      case 'succeeded':
        break;
    }
    const content = task.content;
    if (content !== null && content !== undefined && 'text' in content)
      return {
        kind: 'completed',
        outputs: [],
        text: content.text,
        report: { ...nothingDelivered, tokens: tokensOf(task) },
      };
    if (content === null || content === undefined)
      throw unverifiableBody(response.upstreamRequestId, 'succeeded task without content');
    const seconds = videoSeconds(task);
    if (seconds === undefined)
      throw unverifiableBody(
        response.upstreamRequestId,
        'succeeded video without its length (duration, or frames with framespersecond)',
      );
    return {
      kind: 'completed',
      outputs: [this.fromUrl(content.video_url)],
      report: { ...nothingDelivered, secondsDelivered: seconds },
    };
  }

  private async find(idempotencyKey: string, signal?: AbortSignal): Promise<string | null> {
    const response = await this.http.getJson(
      `${TASKS}?idempotency_key=${encodeURIComponent(idempotencyKey)}`,
      signal,
    );
    const list = parseUpstream(
      lookupSchema,
      response.json,
      response.upstreamRequestId,
      'task look-up body',
    );
    return list.items[0]?.id ?? null;
  }

  /** A kept result URL, opened again as the answer's own (task-provider.ts `resultSource`). */
  readonly resultSource = (url: string): TaskOutputSource => this.fromUrl(url);

  /** The result at `url`, with the end of its pre-signed lifetime when the URL states one. */
  private fromUrl(url: string): TaskOutputSource {
    const source = resultUrlSource(
      url,
      { http: this.http, baseUrl: this.baseUrl },
      {
        maxBytes: MAX_FOREIGN_VIDEO_BYTES,
        mediaTypes: FOREIGN_VIDEO_TYPES,
        timeoutMs: this.options.timeoutMs,
        deps: this.options.guarded,
      },
    );
    const expiresAt = signedUrlExpiresAt(url);
    return expiresAt === undefined ? source : { ...source, expiresAt };
  }
}

const nothingDelivered: DeliveryReport = {
  imagesDelivered: 0,
  secondsDelivered: 0,
  billedFailure: false,
};

/** The Ark request body: a text item when there is a prompt, then one item per reference. */
function requestBody(input: H3TaskInput) {
  const references = input.references.map((reference) => {
    const type = ITEM_TYPE[reference.role];
    const url = `data:${reference.mediaType};base64,${reference.bytes.toString('base64')}`;
    return { type, [type]: { url }, role: reference.role };
  });
  return {
    model: input.upstreamModel,
    content: [
      ...(input.prompt === undefined ? [] : [{ type: 'text', text: input.prompt }]),
      ...references,
    ],
    ...(input.resolution === undefined ? {} : { resolution: input.resolution }),
    ...(input.ratio === undefined ? {} : { ratio: input.ratio }),
    duration: input.duration,
    generate_audio: input.generateAudio,
    watermark: input.watermark,
  };
}

/**
 * The seconds of a task's video as Ark reports them: `duration`, or `frames` / `framespersecond`
 * (Ark's own rule: frames = seconds × frame rate, so 120 frames at 24 fps is the same 5 s as
 * `duration: 5`, and 57 frames is 2.375 s). Should both come, the smaller (the caller never pays
 * for the larger of two claims); undefined when neither length is there (`frames` without its
 * rate included: the seconds are never guessed).
 */
function videoSeconds(task: Task): number | undefined {
  const fromFrames =
    task.frames === undefined || task.framespersecond === undefined
      ? undefined
      : task.frames / task.framespersecond;
  if (task.duration === undefined) return fromFrames;
  return fromFrames === undefined ? task.duration : Math.min(task.duration, fromFrames);
}

/**
 * A failure bills only when the upstream says so (`usage.billed`), and then only what it
 * reports: the seconds (`duration`, or `frames` at `framespersecond`) and, for understand, the
 * tokens. Tokens are taken only beside `prompt_tokens` (our understand extension): Ark reports a
 * video task's own `completion_tokens` too, which are not tokens Tollgate prices.
 */
function failureReport(task: Task): DeliveryReport {
  if (task.usage?.billed !== true) return nothingDelivered;
  return {
    imagesDelivered: 0,
    secondsDelivered: videoSeconds(task) ?? 0,
    billedFailure: true,
    ...(task.usage.prompt_tokens === undefined ? {} : { tokens: tokensOf(task) }),
  };
}

function tokensOf(task: Task): { input: number; output: number } {
  return { input: task.usage?.prompt_tokens ?? 0, output: task.usage?.completion_tokens ?? 0 };
}
