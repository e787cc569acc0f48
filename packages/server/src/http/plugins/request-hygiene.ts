import type { FastifyInstance, FastifyRequest } from 'fastify';
import { KEY_LIKE } from '../../auth/key-format.js';
import { ApiError } from '../../errors/api-error.js';
import { decodeEscapes, pathForLog } from '../../log-redaction.js';

/** Query parameters that people (and some SDKs) use to carry keys. */
const KEY_PARAMETERS = new Set([
  'api_key',
  'apikey',
  'key',
  'access_token',
  'token',
  'authorization',
]);

/**
 * The only form of a URL we ever log: the path without query string or fragment, with any
 * segment that holds something secret-shaped replaced by `[redacted]` (log-redaction.ts).
 */
export function pathOnly(request: Pick<FastifyRequest, 'url'>): string {
  return pathForLog(request.url);
}

/**
 * Runs first on every request: stamps `X-Service-Request-Id` (so errors carry it too) and
 * refuses any URL that carries a key. Such a request is never authenticated and its query string
 * is never logged. Before a body is parsed, refuses a JSON body declared in another charset than
 * UTF-8 (the parser would read it as UTF-8 and see something else than the caller sent).
 * Both hooks are synchronous, callback style (no promise per request); what they throw reaches
 * the error handler as a rejection would.
 */
export function registerRequestHygiene(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-service-request-id', request.id);
    refuseKeyInUrl(request.url);
    done();
  });
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const charset = foreignJsonCharset(request.headers['content-type']);
    if (charset !== undefined)
      throw new ApiError(
        'UNSUPPORTED_MEDIA_TYPE',
        `unsupported charset "${charset.slice(0, 40)}" in Content-Type: JSON bodies must be UTF-8`,
        'Content-Type',
      );
    done(null, payload);
  });
}

/** Throws 401 when the URL carries an API key, in its path or as a query parameter. */
function refuseKeyInUrl(url: string): void {
  const index = url.indexOf('?');
  // The common case costs one scan: no query, no escape, nothing key-like.
  if (index === -1 && !url.includes('%') && !KEY_LIKE.test(url)) return;
  const query = index === -1 ? '' : url.slice(index + 1);
  const names = new URLSearchParams(query).keys();
  // However the key's characters were escaped (once, twice, one by one), it is still a key.
  let carriesKey = KEY_LIKE.test(decodeEscapes(url));
  for (const name of names) if (KEY_PARAMETERS.has(name.toLowerCase())) carriesKey = true;
  if (carriesKey) {
    throw new ApiError(
      'UNAUTHENTICATED',
      'API keys must never be sent in a URL; send Authorization: Bearer <API_KEY>. Consider the key exposed and rotate it',
    );
  }
}

/** The `charset` of a JSON Content-Type when it is not UTF-8; undefined otherwise. */
function foreignJsonCharset(contentType: string | undefined): string | undefined {
  // What nearly every client sends, decided without splitting it (this runs on every request).
  if (contentType === undefined || contentType === 'application/json') return undefined;
  const [mediaType = '', ...parameters] = contentType.split(';');
  const essence = mediaType.trim().toLowerCase();
  if (essence !== 'application/json' && !essence.endsWith('+json')) return undefined;
  for (const parameter of parameters) {
    const separator = parameter.indexOf('=');
    if (separator === -1) continue;
    if (parameter.slice(0, separator).trim().toLowerCase() !== 'charset') continue;
    const charset = parameter
      .slice(separator + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (!/^utf-?8$/i.test(charset)) return charset;
  }
  return undefined;
}
