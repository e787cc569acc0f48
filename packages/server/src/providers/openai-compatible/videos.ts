import { z } from 'zod';
import type {
  DeliveryReport,
  PollResult,
  SubmitResult,
  TaskInput,
  TaskProvider,
} from '../task-provider.js';
import { parseUpstream } from '../upstream-error.js';
import type { UpstreamClient } from '../upstream-http.js';
import { referenceImages } from './reference-images.js';

const seconds = z.union([
  z.string().regex(/^\d{1,4}(\.\d+)?$/),
  z.number().nonnegative().max(10_000),
]);

const videoSchema = z.object({
  id: z.string().min(1).max(200),
  status: z.enum(['queued', 'in_progress', 'completed', 'failed']),
  progress: z.number().min(0).max(100).optional(),
  seconds: seconds.optional(),
  error: z
    .object({ code: z.string().max(100).optional(), message: z.string().max(1_000).optional() })
    .nullish(),
  /** The simulator's (and some gateways') usage extension: what was delivered, and whether a failure is billed. */
  usage: z.object({ seconds: seconds.optional(), billed: z.boolean().optional() }).nullish(),
});

const listSchema = z.object({ data: z.array(videoSchema).max(10) });

type Video = z.infer<typeof videoSchema>;

/**
 * The OpenAI Videos API shape: `POST /videos` (with our task id as `Idempotency-Key`),
 * `GET /videos/{id}`, `GET /videos/{id}/content`. Seconds delivered come from the upstream's
 * usage report when it gives one, else from the video's own `seconds`. A failure is billed only
 * when the upstream says so (`usage.billed`). `lookup` (a read-only `GET /videos?idempotency_key=`)
 * exists only for upstreams that offer it (the simulator): OpenAI's `GET /videos` only pages
 * (`after`, `limit`, `order`) and a video carries no client id (docs/tasks.md, "Look-up").
 */
export class OpenAiVideos implements TaskProvider {
  readonly lookup: TaskProvider['lookup'];

  constructor(
    private readonly http: UpstreamClient,
    options: { lookup: boolean },
  ) {
    this.lookup = options.lookup ? (key, signal) => this.find(key, signal) : undefined;
  }

  async submit(
    input: TaskInput,
    idempotencyKey: string,
    signal?: AbortSignal,
  ): Promise<SubmitResult> {
    const response = await this.http.postJson(
      '/videos',
      {
        model: input.upstreamModel,
        prompt: input.prompt,
        seconds: String(input.seconds ?? 0),
        size: input.size,
        ...(input.generateAudio ? { generate_audio: true } : {}),
        ...referenceImages(input),
      },
      signal,
      { 'idempotency-key': idempotencyKey },
    );
    const video = parseUpstream(
      videoSchema,
      response.json,
      response.upstreamRequestId,
      'video body',
    );
    return { kind: 'accepted', upstreamTaskId: video.id };
  }

  async poll(upstreamTaskId: string, signal?: AbortSignal): Promise<PollResult> {
    const id = encodeURIComponent(upstreamTaskId);
    const response = await this.http.getJson(`/videos/${id}`, signal);
    const video = parseUpstream(
      videoSchema,
      response.json,
      response.upstreamRequestId,
      'video body',
    );
    if (video.status === 'queued' || video.status === 'in_progress')
      return { kind: 'pending', progress: video.progress ?? null };
    if (video.status === 'failed')
      return {
        kind: 'failed',
        code: video.error?.code ?? 'generation_failed',
        message: video.error?.message ?? 'the upstream could not make the video',
        report: report(video, video.usage?.billed === true),
      };
    return {
      kind: 'completed',
      report: report(video, false),
      outputs: [
        {
          open: async (openSignal) => {
            const binary = await this.http.getBinary(`/videos/${id}/content`, openSignal);
            return { body: binary.body, mediaType: binary.mediaType };
          },
        },
      ],
    };
  }

  private async find(idempotencyKey: string, signal?: AbortSignal): Promise<string | null> {
    const response = await this.http.getJson(
      `/videos?idempotency_key=${encodeURIComponent(idempotencyKey)}`,
      signal,
    );
    const list = parseUpstream(listSchema, response.json, response.upstreamRequestId, 'video list');
    return list.data[0]?.id ?? null;
  }
}

function report(video: Video, billedFailure: boolean): DeliveryReport {
  const delivered = video.usage?.seconds ?? (video.status === 'failed' ? 0 : video.seconds) ?? 0;
  return { imagesDelivered: 0, secondsDelivered: Number(delivered), billedFailure };
}
