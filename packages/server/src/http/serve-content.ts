import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AssetStorage } from '../assets/local-storage.js';
import { parseRange, rangeNotSatisfiable } from '../assets/range.js';
import type { ServedObject } from '../assets/asset-objects.js';

/**
 * Stored content is served as data, never as a page of this origin, whoever reads it (the owner's
 * asset and task content routes, a public share, an operator's review): never sniffed into
 * another type, and a sandbox without scripts should a browser render it (an uploaded SVG or
 * HTML-looking bytes). One set for every content route; public shares add theirs (routes/shares.ts).
 */
export const INERT_CONTENT_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
} as const;

/**
 * Answers GET or HEAD with a stored object: strong ETag (its content address), `Last-Modified`,
 * `If-None-Match` (304), `If-Range`, and one `Range` (206; 416 with the unsatisfied-range
 * `Content-Range` when unsatisfiable), streamed from storage. The one place content is served.
 */
export async function serveContent(
  request: FastifyRequest,
  reply: FastifyReply,
  storage: AssetStorage,
  object: ServedObject,
  cacheControl = 'private, max-age=0',
): Promise<FastifyReply> {
  const etag = `"${object.sha256}"`;
  void reply
    .headers(INERT_CONTENT_HEADERS)
    .header('etag', etag)
    .header('last-modified', new Date(object.created_at).toUTCString())
    .header('accept-ranges', 'bytes')
    .header('cache-control', cacheControl);
  const ifNoneMatch = request.headers['if-none-match'];
  if (
    ifNoneMatch !== undefined &&
    (ifNoneMatch === '*' ||
      ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag))
  ) {
    return reply.code(304).send();
  }
  const ifRange = request.headers['if-range'];
  const rangeHeader = ifRange === undefined || ifRange === etag ? request.headers.range : undefined;
  const range = parseRange(rangeHeader, object.bytes);
  if (range.kind === 'unsatisfiable') throw rangeNotSatisfiable(object.bytes);
  void reply.type(object.media_type);
  if (range.kind === 'single') {
    void reply
      .code(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${object.bytes}`)
      .header('content-length', range.end - range.start + 1);
    return request.method === 'HEAD'
      ? reply.send()
      : reply.send(await storage.open(object.sha256, range));
  }
  void reply.header('content-length', object.bytes);
  return request.method === 'HEAD' ? reply.send() : reply.send(await storage.open(object.sha256));
}
