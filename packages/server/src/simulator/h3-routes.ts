import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadRequest } from './embeddings.js';
import { exchangeFaults, idempotencyKeyOf, notFound, tooManyJobs } from './exchange.js';
import { H3_TASK_ID, H3Jobs, type H3Job } from './h3.js';
import {
  ARK_PREFIX,
  arkKeepsTask,
  arkTaskList,
  asArkTask,
  refuseArkExtensions,
  refusedVideoUrl,
  signedVideoUrl,
} from './h3-ark.js';
import { planOutput } from './h3-output.js';
import { parseH3Body } from './h3-request.js';
import { parseBody, readBody, send, sendBytes, sendError } from './http-io.js';
import { SIMULATOR_LIMITS } from './limits.js';
import { EncoderBusy, type VideoEncoder } from './video-encoder.js';

const TASKS = '/v1/contents/generations/tasks';
const TASK_PATH = /^\/v1\/contents\/generations\/tasks\/([^/]+)$/;
const VIDEO_PATH = /^\/v1\/contents\/generations\/tasks\/([^/]+)\/video\.mp4$/;

export interface H3Routes {
  /**
   * Answers the request if its path is an H3 route; false when it is not one. Throws
   * `BadRequest`, `DirectiveError`, `SyntaxError` (400) and `IdempotencyConflict` (409) for the
   * caller (media-routes.ts) to answer.
   */
  handle(url: URL, request: IncomingMessage, response: ServerResponse): Promise<boolean>;
}

/**
 * The Volcengine Ark content generation tasks protocol (`sim-h3`): `POST /v1/contents/
 * generations/tasks`, `GET …/tasks/{id}`, the simulator's `GET …/tasks?idempotency_key=` look-up
 * and `GET …/tasks/{id}/video.mp4` for the file. docs/simulator.md, "H3", describes them. The
 * same routes under `/dialect/ark/v1` answer as real Ark does, every extension off (h3-ark.ts).
 */
export function createH3Routes(options: {
  baseUrl: () => string;
  now: () => number;
  /** Shared with the Videos routes: one encoder, one cache, one queue. */
  encoder: VideoEncoder;
}): H3Routes {
  const jobs = new H3Jobs(options.now);
  /** The task as the simulator shows it, or (`realArk`) as real Ark would. */
  const view = (job: H3Job, realArk: boolean) => {
    const url = `${options.baseUrl()}${realArk ? ARK_PREFIX : ''}${TASKS}/${job.id}/video.mp4`;
    if (!realArk) return jobs.view(job, url);
    // Signed when the video was made: Ark's URL lives 24 hours from then, however often read.
    return asArkTask(jobs.view(job, signedVideoUrl(url, job.createdAtMs + job.durationMs)), job);
  };

  async function create(request: IncomingMessage, response: ServerResponse, realArk: boolean) {
    // Refused before reading, with an answer (413, a certain "not done"): reading past the limit
    // would drop the connection, which a client must take as "maybe done".
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > SIMULATOR_LIMITS.bodyBytes) {
      const limit = SIMULATOR_LIMITS.bodyBytes;
      sendError(response, 413, 'body_too_large', `the body is over ${limit} bytes`, {
        connection: 'close',
      });
      return;
    }
    const input = parseH3Body(parseBody(await readBody(request)));
    if (realArk) refuseArkExtensions(input);
    // Real Ark documents no idempotency: its `Idempotency-Key` is ignored, a repeat is a new job.
    const key = realArk ? undefined : idempotencyKeyOf(request);
    const output = await planOutput(input);
    if (!(await exchangeFaults(input.directives, response))) return;
    // A replay answers the job created first, whatever happened to that first answer.
    const earlier = key === undefined ? undefined : jobs.replay(key, input);
    if (earlier !== undefined) {
      send(response, 200, { id: earlier.id });
      return;
    }
    const job = jobs.create(input, output, key);
    if (job === undefined) return tooManyJobs(response, 'H3 tasks');
    if (input.directives.task === 'unknown') return; // created, and the answer never comes
    send(response, 200, { id: job.id });
  }

  function lookUp(url: URL, response: ServerResponse, realArk: boolean) {
    if (realArk) {
      send(
        response,
        200,
        arkTaskList(url, jobs.all(), options.now(), (job) => view(job, true)),
      );
      return;
    }
    const key = url.searchParams.get('idempotency_key');
    if (key === null)
      throw new BadRequest('idempotency_key is required: the simulator lists tasks by key only');
    const job = jobs.byIdempotencyKey(key);
    send(response, 200, {
      items: job === undefined ? [] : [view(job, false)],
      total: job === undefined ? 0 : 1,
    });
  }

  async function video(
    id: string,
    url: URL,
    request: IncomingMessage,
    response: ServerResponse,
    realArk: boolean,
  ) {
    const refused = realArk ? refusedVideoUrl(url, options.now()) : null;
    if (refused !== null) {
      sendError(response, 403, 'AccessDenied', refused);
      return;
    }
    const job = jobs.get(id);
    if (job === undefined) return notFound(response, id);
    if (job.output.kind !== 'video' || !jobs.isSucceeded(job)) {
      sendError(response, 404, 'video_not_ready', `task ${id} has no finished video`);
      return;
    }
    try {
      sendBytes(request, response, await options.encoder.content(job.output.spec), 'video/mp4');
    } catch (error) {
      if (!(error instanceof EncoderBusy)) throw error;
      sendError(response, 503, 'encoder_busy', error.message, { 'retry-after': '1' });
    }
  }

  return {
    async handle(url, request, response) {
      // Under `/dialect/ark` the same routes answer as real Ark (h3-ark.ts).
      const realArk = url.pathname.startsWith(`${ARK_PREFIX}/v1/`);
      const path = realArk ? url.pathname.slice(ARK_PREFIX.length) : url.pathname;
      const method = request.method ?? '';
      let match: RegExpExecArray | null;
      if (path === TASKS && method === 'POST') await create(request, response, realArk);
      else if (path === TASKS && method === 'GET') lookUp(url, response, realArk);
      else if ((match = TASK_PATH.exec(path)) !== null && method === 'GET') {
        const id = match[1] ?? '';
        const job = H3_TASK_ID.test(id) ? jobs.get(id) : undefined;
        // Real Ark answers a task for 7 days after its creation only.
        if (job === undefined || (realArk && !arkKeepsTask(job, options.now())))
          notFound(response, id);
        else send(response, 200, view(job, realArk));
      } else if (
        (match = VIDEO_PATH.exec(path)) !== null &&
        (method === 'GET' || method === 'HEAD')
      )
        await video(match[1] ?? '', url, request, response, realArk);
      else return false;
      return true;
    },
  };
}
