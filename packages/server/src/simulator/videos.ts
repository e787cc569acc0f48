import { createHash, randomBytes } from 'node:crypto';
import type { Directives } from './directives.js';
import { BadRequest } from './embeddings.js';
import { parsePrompt, parseSize } from './images.js';
import { ClockedJobs } from './clocked-jobs.js';
import { SIMULATOR_LIMITS } from './limits.js';

/** `POST /v1/videos` as the OpenAI Videos API takes it (JSON). */
export interface VideoRequest {
  model: string;
  prompt: string;
  seconds: number;
  width: number;
  height: number;
}

/** A job: everything its state is computed from. Holds digests of the prompt, never the prompt. */
export interface VideoJob {
  readonly id: string;
  readonly model: string;
  readonly seconds: number;
  readonly width: number;
  readonly height: number;
  readonly createdAtMs: number;
  /** Milliseconds from creation to the finished state. */
  readonly durationMs: number;
  readonly outcome: 'completed' | 'failed' | 'failed_billed';
  readonly deliveredSeconds: number;
  /** SHA-256 of the cleaned prompt: the seed of the frames' palette, 64 characters per job. */
  readonly pictureSeed: string;
  readonly idempotencyKey: string | undefined;
  /** SHA-256 of the request, to tell a replay from a different request under the same key. */
  readonly fingerprint: string;
}

const DEFAULT_DURATION_MS = 1_000;
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function parseVideoBody(body: unknown): VideoRequest {
  if (!isObject(body)) throw new BadRequest('body must be a JSON object');
  const { model, seconds = '4', size = '720x1280' } = body;
  if (typeof model !== 'string' || model === '') throw new BadRequest('model is required');
  const prompt = parsePrompt(body['prompt']);
  const { min, max } = SIMULATOR_LIMITS.videoSeconds;
  const parsedSeconds =
    typeof seconds === 'string' && /^\d{1,4}$/.test(seconds) ? Number(seconds) : seconds;
  if (
    typeof parsedSeconds !== 'number' ||
    !Number.isInteger(parsedSeconds) ||
    parsedSeconds < min ||
    parsedSeconds > max
  )
    throw new BadRequest(`seconds must be an integer (or its string) from ${min} to ${max}`);
  const { width, height } = parseSize(size, 'size', SIMULATOR_LIMITS.videoSide, true);
  return { model, prompt, seconds: parsedSeconds, width, height };
}

/**
 * The video jobs, in memory and bounded: at most `SIMULATOR_LIMITS.videoJobs`; when full, the
 * oldest finished job is evicted, and when none is finished a new job is refused (`create`
 * answers undefined). State is a function of the clock, so no timer runs per job.
 */
export class VideoJobs {
  private readonly jobs: ClockedJobs<VideoJob>;

  constructor(now: () => number) {
    this.jobs = new ClockedJobs(now);
  }

  /** The job created earlier under `key`; throws `IdempotencyConflict` if it was another request. */
  replay(key: string, request: VideoRequest): VideoJob | undefined {
    return this.jobs.replay(key, fingerprintOf(request));
  }

  create(
    request: VideoRequest,
    cleanedPrompt: string,
    directives: Directives,
    key: string | undefined,
  ): VideoJob | undefined {
    const job: VideoJob = {
      id: `video_${randomBytes(16).toString('hex')}`,
      model: request.model,
      seconds: request.seconds,
      width: request.width,
      height: request.height,
      createdAtMs: this.jobs.now(),
      durationMs:
        directives.taskSeconds === undefined ? DEFAULT_DURATION_MS : directives.taskSeconds * 1000,
      outcome:
        directives.task === 'fail'
          ? 'failed'
          : directives.task === 'fail_billed'
            ? 'failed_billed'
            : 'completed',
      deliveredSeconds: directives.deliverSeconds ?? request.seconds,
      pictureSeed: createHash('sha256').update(cleanedPrompt, 'utf8').digest('hex'),
      idempotencyKey: key,
      fingerprint: fingerprintOf(request),
    };
    return this.jobs.add(job) ? job : undefined;
  }

  get(id: string): VideoJob | undefined {
    return this.jobs.get(id);
  }

  byIdempotencyKey(key: string): VideoJob | undefined {
    return this.jobs.byIdempotencyKey(key);
  }

  /** The newest `limit` jobs, newest first. */
  newest(limit: number): VideoJob[] {
    return this.jobs.newest(limit);
  }

  isCompleted(job: VideoJob): boolean {
    return job.outcome === 'completed' && this.jobs.finished(job);
  }

  /** The OpenAI video object at this moment, with the simulator's `usage` extension once finished. */
  view(job: VideoJob) {
    const elapsed = this.jobs.now() - job.createdAtMs;
    const base = {
      id: job.id,
      object: 'video',
      model: job.model,
      created_at: Math.floor(job.createdAtMs / 1000),
      seconds: String(job.seconds),
      size: `${job.width}x${job.height}`,
    };
    if (!this.jobs.finished(job)) {
      // The first fifth of the time queued, then running with progress in proportion.
      const queued = this.jobs.queued(job);
      return {
        ...base,
        status: queued ? 'queued' : 'in_progress',
        progress: queued ? 0 : Math.min(99, Math.floor((100 * elapsed) / job.durationMs)),
      };
    }
    if (job.outcome === 'completed')
      return {
        ...base,
        status: 'completed',
        progress: 100,
        completed_at: Math.floor((job.createdAtMs + job.durationMs) / 1000),
        usage: { seconds: job.deliveredSeconds },
      };
    const billed = job.outcome === 'failed_billed';
    return {
      ...base,
      status: 'failed',
      progress: 100,
      error: {
        code: 'generation_failed',
        message: `simulated generation failure${billed ? ' (billed)' : ''}`,
      },
      usage: { seconds: billed ? job.seconds : 0, billed },
    };
  }
}

function fingerprintOf(request: VideoRequest): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        request.model,
        request.prompt,
        request.seconds,
        request.width,
        request.height,
      ]),
    )
    .digest('hex');
}
