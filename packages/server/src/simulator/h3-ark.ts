import { createHash } from 'node:crypto';
import { BadRequest } from './embeddings.js';
import type { H3Job } from './h3.js';
import type { H3Request } from './h3-request.js';
import { SIMULATOR_LIMITS } from './limits.js';

/**
 * The simulator's H3 routes as real Volcengine Ark behaves (an upstream with `dialect: ark`,
 * reached under `/dialect/ark/v1`; docs/simulator.md, "H3 as real Ark"). Written from Ark's API
 * reference, independently of the gateway's adapter (providers/ark/), so that a test of one
 * against the other can fail. Every extension of the simulator's own H3 routes is off:
 *
 * - no look-up by idempotency key: the task list filters by `filter.task_ids`, `filter.status`
 *   and `filter.model` only, and `Idempotency-Key` is not honoured (a repeated POST is a second
 *   job, billed twice by the real service);
 * - no `understand` task (`content.text`, `usage.prompt_tokens`): refused;
 * - no `usage.billed`: `[sim:task=fail_billed]` is refused, a failure carries none;
 * - tasks are answered for 7 days after their creation (then 404), and a result URL is
 *   pre-signed for 24 hours after the video was made (then 403), as TOS signs Ark's;
 * - the video's length is reported as `duration` with its `framespersecond`.
 */

/** Where the routes answer as real Ark (the gateway's base URL for `dialect: ark` ends `/v1`). */
export const ARK_PREFIX = '/dialect/ark';
/** Ark answers a task's reads for 7 days after its creation. */
export const ARK_TASK_RETENTION_MS = 7 * 86_400_000;
/** Ark's result URLs are pre-signed for 24 hours (the video is deleted then). */
export const ARK_URL_LIFETIME_SECONDS = 86_400;
const PAGE_SIZE = { default: 10, max: 500 } as const;
const PAGE_NUM_MAX = 500;
const STATUSES = new Set(['queued', 'running', 'cancelled', 'succeeded', 'failed', 'expired']);

/** Throws `BadRequest` for a request that needs an extension real Ark lacks. */
export function refuseArkExtensions(request: H3Request): void {
  if (request.action === 'understand')
    throw new BadRequest(
      'Volcengine Ark has no video understanding task (content.text is an extension of the simulator); Ark answers questions about a video through its chat API',
    );
  if (request.directives.task === 'fail_billed')
    throw new BadRequest(
      '[sim:task=fail_billed] needs usage.billed, an extension of the simulator that Volcengine Ark lacks',
    );
}

/** Whether Ark still answers reads of the job (created within the last 7 days). */
export function arkKeepsTask(job: Pick<H3Job, 'createdAtMs'>, now: number): boolean {
  return now - job.createdAtMs < ARK_TASK_RETENTION_MS;
}

/** `yyyyMMddTHHmmssZ`, the form of TOS's `X-Tos-Date`. */
const tosDate = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

const signatureOf = (path: string, date: string, expires: string) =>
  createHash('sha256').update(`${path}\n${date}\n${expires}`).digest('hex');

/**
 * The video's URL pre-signed at `signedAtMs` (when the video was made) for 24 hours, with the
 * query parameters TOS writes (`X-Tos-Date`, `X-Tos-Expires`, `X-Tos-Signature`).
 */
export function signedVideoUrl(url: string, signedAtMs: number): string {
  const date = tosDate(signedAtMs);
  const expires = String(ARK_URL_LIFETIME_SECONDS);
  const signature = signatureOf(new URL(url).pathname, date, expires);
  return `${url}?X-Tos-Algorithm=TOS4-HMAC-SHA256&X-Tos-Date=${date}&X-Tos-Expires=${expires}&X-Tos-Signature=${signature}`;
}

/**
 * Why a video URL may not be served now, as TOS refuses one (403): its signature does not match
 * its path, date and lifetime, or it has expired. Null when it may.
 */
export function refusedVideoUrl(url: URL, now: number): string | null {
  const date = url.searchParams.get('X-Tos-Date') ?? '';
  const expires = url.searchParams.get('X-Tos-Expires') ?? '';
  if (url.searchParams.get('X-Tos-Signature') !== signatureOf(url.pathname, date, expires))
    return 'The request signature we calculated does not match the signature you provided';
  const signedAt = Date.parse(
    `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`,
  );
  return now >= signedAt + Number(expires) * 1000 ? 'Request has expired' : null;
}

/**
 * A task as real Ark shows it, from the simulator's own view: no `usage.billed`, and a video
 * action's `framespersecond` beside its `duration`.
 */
export function asArkTask(view: Record<string, unknown>, job: H3Job): Record<string, unknown> {
  const { usage, ...rest } = view;
  const shown: Record<string, unknown> = { ...rest };
  if (typeof usage === 'object' && usage !== null) {
    const { billed: _billed, ...counts } = usage as Record<string, unknown>;
    shown['usage'] = counts;
  }
  if (job.output.kind === 'video') shown['framespersecond'] = SIMULATOR_LIMITS.videoFramesPerSecond;
  return shown;
}

/**
 * Ark's task list (`GET /contents/generations/tasks`): the jobs of the last 7 days, newest
 * first, filtered by `filter.task_ids` (repeated or comma-separated), `filter.status` and
 * `filter.model`, paged by `page_num` (1–500) and `page_size` (1–500, default 10). There is no
 * filter by idempotency key: asking for one is a 400 naming it.
 */
export function arkTaskList(
  url: URL,
  jobs: readonly H3Job[],
  now: number,
  view: (job: H3Job) => Record<string, unknown>,
): { items: Record<string, unknown>[]; total: number } {
  const parameters = url.searchParams;
  if (parameters.has('idempotency_key'))
    throw new BadRequest(
      'idempotency_key is not a filter of the Volcengine Ark task list (filter.task_ids, filter.status, filter.model)',
    );
  const ids = new Set(
    parameters
      .getAll('filter.task_ids')
      .flatMap((value) => value.split(','))
      .filter((id) => id !== ''),
  );
  const status = parameters.get('filter.status');
  if (status !== null && !STATUSES.has(status))
    throw new BadRequest(`filter.status must be one of ${[...STATUSES].join(', ')}`);
  const model = parameters.get('filter.model');
  const pageNum = whole(parameters.get('page_num'), 'page_num', 1, PAGE_NUM_MAX, 1);
  const pageSize = whole(
    parameters.get('page_size'),
    'page_size',
    1,
    PAGE_SIZE.max,
    PAGE_SIZE.default,
  );
  const matching = jobs
    .filter((job) => arkKeepsTask(job, now))
    .filter((job) => ids.size === 0 || ids.has(job.id))
    .filter((job) => model === null || job.model === model)
    .map(view)
    .filter((task) => status === null || task['status'] === status);
  return {
    items: matching.slice((pageNum - 1) * pageSize, pageNum * pageSize),
    total: matching.length,
  };
}

function whole(
  value: string | null,
  name: string,
  min: number,
  max: number,
  fallback: number,
): number {
  if (value === null) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < min || parsed > max)
    throw new BadRequest(`${name} must be an integer from ${min} to ${max}`);
  return parsed;
}
