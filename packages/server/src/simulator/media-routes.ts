import type { IncomingMessage, ServerResponse } from 'node:http';
import { DirectiveError, parseDirectives } from './directives.js';
import { BadRequest } from './embeddings.js';
import { exchangeFaults, idempotencyKeyOf, notFound, tooManyJobs } from './exchange.js';
import { createH3Routes } from './h3-routes.js';
import { parseBody, readBody, send, sendBytes, sendError } from './http-io.js';
import { ImageService, parseImageBody } from './images.js';
import { EncoderBusy, VideoEncoder } from './video-encoder.js';
import { IdempotencyConflict } from './clocked-jobs.js';
import { parseVideoBody, VideoJobs } from './videos.js';

export interface MediaRoutes {
  /** Answers the request if its path is an image or video route; false when it is not one. */
  handle(request: IncomingMessage, response: ServerResponse): Promise<boolean>;
  close(): Promise<void>;
}

const IMAGE_FILE = /^\/v1\/images\/files\/(img_[0-9a-f]{24})\.png$/;
const VIDEO = /^\/v1\/videos\/(video_[0-9a-f]{32})$/;
const VIDEO_CONTENT = /^\/v1\/videos\/(video_[0-9a-f]{32})\/content$/;

/**
 * The OpenAI Images (`POST /v1/images/generations`) and Videos (`POST /v1/videos`,
 * `GET /v1/videos/{id}`, `GET /v1/videos/{id}/content`) protocols, plus the simulator's own
 * `GET /v1/videos?idempotency_key=` lookup and `GET /v1/images/files/{id}.png` for URL answers,
 * and the Ark content generation tasks of `sim-h3` (h3-routes.ts, sharing the one encoder).
 * docs/simulator.md describes them and their directives.
 */
export function createMediaRoutes(options: {
  baseUrl: () => string;
  now: () => number;
}): MediaRoutes {
  const images = new ImageService(options.baseUrl, options.now);
  const videos = new VideoJobs(options.now);
  const encoder = new VideoEncoder();
  const h3 = createH3Routes({ ...options, encoder });

  async function createImages(request: IncomingMessage, response: ServerResponse) {
    const input = parseImageBody(parseBody(await readBody(request)));
    const { directives, cleaned } = parseDirectives([input.prompt]);
    const count = directives.deliverImages ?? input.n;
    if (count > input.n)
      throw new BadRequest(`[sim:deliver_images=${count}] may deliver at most n (${input.n})`);
    if (!(await exchangeFaults(directives, response))) return;
    if (directives.task === 'unknown') return; // accepted; the answer never comes
    if (directives.task === 'fail' || directives.task === 'fail_billed') {
      sendError(response, 500, 'generation_failed', 'simulated image generation failure');
      return;
    }
    send(response, 200, await images.generate(input, cleaned[0] ?? '', count));
  }

  async function createVideo(request: IncomingMessage, response: ServerResponse) {
    const input = parseVideoBody(parseBody(await readBody(request)));
    const key = idempotencyKeyOf(request);
    const { directives, cleaned } = parseDirectives([input.prompt]);
    if (!(await exchangeFaults(directives, response))) return;
    // A replay answers the job created first, whatever happened to that first answer.
    const earlier = key === undefined ? undefined : videos.replay(key, input);
    if (earlier !== undefined) {
      send(response, 200, videos.view(earlier));
      return;
    }
    const job = videos.create(input, cleaned[0] ?? '', directives, key);
    if (job === undefined) return tooManyJobs(response, 'video jobs');
    if (directives.task === 'unknown') return; // created, and the answer never comes
    send(response, 200, videos.view(job));
  }

  function listVideos(url: URL, response: ServerResponse) {
    const key = url.searchParams.get('idempotency_key');
    if (key !== null) {
      const job = videos.byIdempotencyKey(key);
      send(response, 200, { object: 'list', data: job === undefined ? [] : [videos.view(job)] });
      return;
    }
    const limit = Number(url.searchParams.get('limit') ?? '20');
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw new BadRequest('limit must be an integer from 1 to 100');
    send(response, 200, {
      object: 'list',
      data: videos.newest(limit).map((job) => videos.view(job)),
    });
  }

  async function videoContent(
    id: string,
    url: URL,
    request: IncomingMessage,
    response: ServerResponse,
  ) {
    const variant = url.searchParams.get('variant');
    if (variant !== null && variant !== 'video')
      throw new BadRequest('variant must be video (the simulator has no thumbnails)');
    const job = videos.get(id);
    if (job === undefined) return notFound(response, id);
    if (!videos.isCompleted(job)) {
      sendError(response, 404, 'video_not_ready', `video ${id} is not completed`);
      return;
    }
    try {
      const bytes = await encoder.content({
        pictureSeed: job.pictureSeed,
        width: job.width,
        height: job.height,
        seconds: job.deliveredSeconds,
      });
      sendBytes(request, response, bytes, 'video/mp4');
    } catch (error) {
      if (!(error instanceof EncoderBusy)) throw error;
      sendError(response, 503, 'encoder_busy', error.message, { 'retry-after': '1' });
    }
  }

  async function route(request: IncomingMessage, response: ServerResponse): Promise<boolean> {
    const url = new URL(request.url ?? '/', 'http://simulator');
    const path = url.pathname;
    const method = request.method ?? '';
    const read = method === 'GET' || method === 'HEAD';
    if (await h3.handle(url, request, response)) return true;
    let match: RegExpExecArray | null;
    if (path === '/v1/images/generations' && method === 'POST')
      await createImages(request, response);
    else if (path === '/v1/videos' && method === 'POST') await createVideo(request, response);
    else if (path === '/v1/videos' && method === 'GET') listVideos(url, response);
    else if ((match = VIDEO.exec(path)) !== null && method === 'GET') {
      const job = videos.get(match[1] ?? '');
      if (job === undefined) notFound(response, match[1] ?? '');
      else send(response, 200, videos.view(job));
    } else if ((match = VIDEO_CONTENT.exec(path)) !== null && read)
      await videoContent(match[1] ?? '', url, request, response);
    else if ((match = IMAGE_FILE.exec(path)) !== null && read) {
      const bytes = images.file(match[1] ?? '');
      if (bytes === undefined) notFound(response, match[1] ?? '');
      else sendBytes(request, response, bytes, 'image/png');
    } else return false;
    return true;
  }

  return {
    async handle(request, response) {
      try {
        return await route(request, response);
      } catch (error) {
        if (error instanceof IdempotencyConflict) {
          sendError(response, 409, 'idempotency_key_reused', error.message);
          return true;
        }
        const known =
          error instanceof BadRequest ||
          error instanceof DirectiveError ||
          error instanceof SyntaxError;
        if (!known) throw error;
        sendError(response, 400, 'invalid_request', error.message);
        return true;
      }
    },
    close: () => encoder.close(),
  };
}
