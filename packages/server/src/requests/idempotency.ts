import { ApiError } from '../errors/api-error.js';
import { canonicalJson, sha256Hex } from '../util/canonical-json.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Reads the required `Idempotency-Key` header: a UUID, as the spec asks callers to generate. */
export function readIdempotencyKey(headers: Record<string, string | string[] | undefined>): string {
  const value = headers['idempotency-key'];
  if (value === undefined)
    throw new ApiError(
      'INVALID_INPUT',
      'Idempotency-Key header is required on every business POST (a new UUID per request); ' +
        'a tool that cannot send one needs a key created with "idempotency": "optional" (docs/keys.md)',
      'Idempotency-Key',
    );
  if (typeof value !== 'string' || !UUID.test(value))
    throw new ApiError('INVALID_INPUT', 'Idempotency-Key must be a UUID', 'Idempotency-Key');
  return value.toLowerCase();
}

/**
 * Method + path + canonical body: the same logical request always gets the same fingerprint.
 * `path` carries the path's values (`/v1/videos/task_1/settle`, never the route pattern
 * `/v1/videos/:id/settle`): the same key sent for another task is another request (409
 * `IDEMPOTENCY_CONFLICT`), never a replay of the first task's answer. See `pathWithValues`.
 */
export function fingerprint(method: string, path: string, body: unknown): string {
  return sha256Hex(`${method} ${path}\n${canonicalJson(body ?? null)}`);
}

/**
 * The route pattern with its parameters' decoded values put back, each percent-encoded: one
 * spelling per logical path, however the caller encoded it (`%74ask_1` and `task_1` are the same
 * task), and unambiguous (a value holding `/` stays one segment). A route without parameters is
 * its pattern, so the fingerprints of those routes are what they were before values counted.
 */
export function pathWithValues(route: string, params: unknown): string {
  if (params === null || typeof params !== 'object') return route;
  const values = params as Record<string, unknown>;
  return route.replace(/:([A-Za-z0-9_]+)/g, (whole, name: string) => {
    const value = values[name];
    return typeof value === 'string' ? encodeURIComponent(value) : whole;
  });
}
