import type { FastifyInstance, FastifyRequest } from 'fastify';
import { KEY_LIKE } from '../../auth/key-format.js';
import { ApiError } from '../../errors/api-error.js';

/** Query parameters that people (and some SDKs) use to carry keys. */
const KEY_PARAMETERS = new Set([
  'api_key',
  'apikey',
  'key',
  'access_token',
  'token',
  'authorization',
]);

/** The path without the query string: the only form of a URL we ever log. */
export function pathOnly(request: Pick<FastifyRequest, 'url'>): string {
  const index = request.url.indexOf('?');
  return index === -1 ? request.url : request.url.slice(0, index);
}

/**
 * Runs first on every request: stamps `X-Service-Request-Id` (so errors carry it too) and
 * refuses any URL that carries a key. Such a request is never authenticated and its query string
 * is never logged.
 */
export function registerRequestHygiene(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-service-request-id', request.id);
    const index = request.url.indexOf('?');
    if (index === -1 && !KEY_LIKE.test(request.url)) return;
    const query = index === -1 ? '' : request.url.slice(index + 1);
    const names = new URLSearchParams(query).keys();
    let carriesKey = KEY_LIKE.test(decodeSafely(request.url));
    for (const name of names) if (KEY_PARAMETERS.has(name.toLowerCase())) carriesKey = true;
    if (carriesKey) {
      throw new ApiError(
        'UNAUTHENTICATED',
        'API keys must never be sent in a URL; send Authorization: Bearer <API_KEY>. Consider the key exposed and rotate it',
      );
    }
  });
}

function decodeSafely(url: string): string {
  try {
    return decodeURIComponent(url);
  } catch {
    return url;
  }
}
