import { randomBytes } from 'node:crypto';
import { DEFAULT_RATIO, DEFAULT_RESOLUTION, type H3Output } from './h3-output.js';
import type { H3Request, H3SimAction } from './h3-request.js';
import { SIMULATOR_LIMITS } from './limits.js';
import { ClockedJobs } from './clocked-jobs.js';

/** An H3 task id: `cgt-` and 24 hex digits (Ark's ids start `cgt-` too). */
export const H3_TASK_ID = /^cgt-[0-9a-f]{24}$/;

/** A job: everything its state is computed from. Keeps digests and a short text, never the media. */
export interface H3Job {
  readonly id: string;
  readonly model: string;
  readonly action: H3SimAction;
  readonly createdAtMs: number;
  /** Milliseconds from creation to the finished state. */
  readonly durationMs: number;
  readonly outcome: 'succeeded' | 'failed' | 'failed_billed';
  /** Video actions: the resolution and ratio in effect (defaults filled in). */
  readonly resolution: string | undefined;
  readonly ratio: string | undefined;
  readonly output: H3Output;
  readonly idempotencyKey: string | undefined;
  readonly fingerprint: string;
}

const DEFAULT_DURATION_MS = 1_000;
type VideoOutput = Extract<H3Output, { kind: 'video' }>;

/**
 * The H3 jobs, in memory and bounded like the video jobs: at most `SIMULATOR_LIMITS.videoJobs`;
 * when full, the oldest finished job is evicted (with its idempotency key), and when none is
 * finished `create` answers undefined (429). State is a function of the clock: queued for the
 * first fifth of the job's time, running until it ends, then succeeded or failed.
 */
export class H3Jobs {
  private readonly jobs: ClockedJobs<H3Job>;

  constructor(now: () => number) {
    this.jobs = new ClockedJobs(now);
  }

  /** The job created earlier under `key`; throws `IdempotencyConflict` if it was another request. */
  replay(key: string, request: H3Request): H3Job | undefined {
    return this.jobs.replay(key, request.fingerprint);
  }

  create(request: H3Request, output: H3Output, key: string | undefined): H3Job | undefined {
    const { task, taskSeconds } = request.directives;
    const video = output.kind === 'video';
    const job: H3Job = {
      id: `cgt-${randomBytes(12).toString('hex')}`,
      model: request.model,
      action: request.action,
      createdAtMs: this.jobs.now(),
      durationMs: taskSeconds === undefined ? DEFAULT_DURATION_MS : taskSeconds * 1000,
      outcome: task === 'fail' ? 'failed' : task === 'fail_billed' ? 'failed_billed' : 'succeeded',
      resolution: video ? (request.resolution ?? DEFAULT_RESOLUTION) : undefined,
      ratio: video ? (request.ratio ?? DEFAULT_RATIO) : undefined,
      output,
      idempotencyKey: key,
      fingerprint: request.fingerprint,
    };
    return this.jobs.add(job) ? job : undefined;
  }

  get(id: string): H3Job | undefined {
    return this.jobs.get(id);
  }

  byIdempotencyKey(key: string): H3Job | undefined {
    return this.jobs.byIdempotencyKey(key);
  }

  /** Every kept job, newest first (for Ark's task list, h3-ark.ts). */
  all(): H3Job[] {
    return this.jobs.newest(SIMULATOR_LIMITS.videoJobs);
  }

  isSucceeded(job: H3Job): boolean {
    return job.outcome === 'succeeded' && this.jobs.finished(job);
  }

  /**
   * The Ark task object at this moment; `videoUrl` is where a succeeded video is read.
   * `duration` (video actions only): the seconds asked while queued or running and on a billed
   * failure (what it bills), the file's own seconds once succeeded, absent on an unbilled
   * failure. Our extensions: `content.text` (understand), `usage.prompt_tokens`, `usage.billed`.
   */
  view(job: H3Job, videoUrl: string) {
    const { output } = job;
    const at = (milliseconds: number) => Math.floor(milliseconds / 1000);
    const base = {
      id: job.id,
      model: job.model,
      created_at: at(job.createdAtMs),
      ...(job.resolution === undefined ? {} : { resolution: job.resolution }),
      ...(job.ratio === undefined ? {} : { ratio: job.ratio }),
    };
    const duration = (pick: (video: VideoOutput) => number) =>
      output.kind === 'video' ? { duration: pick(output) } : {};
    if (!this.jobs.finished(job)) {
      const queued = this.jobs.queued(job);
      return {
        ...base,
        status: queued ? 'queued' : 'running',
        updated_at: at(job.createdAtMs + (queued ? 0 : job.durationMs / 5)),
        ...duration((video) => video.askedSeconds),
        error: null,
      };
    }
    const finished = { ...base, updated_at: at(job.createdAtMs + job.durationMs) };
    const tokens =
      output.kind === 'text'
        ? {
            prompt_tokens: output.promptTokens,
            completion_tokens: output.completionTokens,
            total_tokens: output.promptTokens + output.completionTokens,
          }
        : { completion_tokens: videoTokens(output), total_tokens: videoTokens(output) };
    if (job.outcome === 'succeeded')
      return {
        ...finished,
        status: 'succeeded',
        ...duration((video) => video.spec.seconds),
        content: output.kind === 'text' ? { text: output.text } : { video_url: videoUrl },
        usage: tokens,
        error: null,
      };
    const nothing = { completion_tokens: 0, total_tokens: 0 };
    const billed = job.outcome === 'failed_billed';
    return {
      ...finished,
      status: 'failed',
      // A billed failure reports what it bills: the seconds asked, or the tokens read and written.
      ...(billed ? duration((video) => video.askedSeconds) : {}),
      usage: { ...(billed && output.kind === 'text' ? tokens : nothing), billed },
      error: {
        code: 'generation_failed',
        message: `simulated generation failure${billed ? ' (billed)' : ''}`,
      },
    };
  }
}

/** Ark counts a video's tokens as width × height × frames / 1024; here of the simulated file. */
function videoTokens(output: VideoOutput): number {
  const { width, height, seconds } = output.spec;
  return Math.ceil((width * height * SIMULATOR_LIMITS.videoFramesPerSecond * seconds) / 1024);
}
