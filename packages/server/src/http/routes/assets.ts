import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { deleteAsset, ownDeliveredAsset } from '../../assets/asset-uses.js';
import type { AssetStorage } from '../../assets/local-storage.js';
import type { UploadInput } from '../../uploads/upload-service.js';
import type { Principal } from '../../auth/key-service.js';
import { listAccountAssets } from '../../assets/asset-listing.js';
import { invalidInput } from '../../errors/api-error.js';
import { readIdempotencyKey } from '../../requests/idempotency.js';
import { principalOf, requirePersonal } from '../plugins/authenticate.js';
import type { AppDeps } from '../deps.js';
import { pageQuerySchema } from '../page-query.js';
import { serveContent } from '../serve-content.js';

/**
 * Personal assets (docs/assets.md): raw-body uploads streamed to storage and checked by their
 * bytes, the account's list, Range downloads, deletion. Reads need a personal key; another
 * account's asset is the same 404 as a missing one.
 */
export function registerAssets(v1: FastifyInstance, deps: AppDeps, storage: AssetStorage): void {
  void v1.register(async (scope) => {
    // Uploads take any media type as a raw stream; the route checks the bytes itself.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

    // An upload refused before its body has arrived (415 from its first bytes, 413, 429) closes
    // the connection after the answer: app.ts does this for every route.
    // Its fingerprint is the hash of the bytes still to arrive: judged at the claim, not before.
    scope.post('/v1/assets', { config: { businessPost: false } }, async (request, reply) => {
      const answer = await deps.uploads.upload(parseUpload(deps, request, principalOf(request)));
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
    });

    scope.get<{ Querystring: { limit?: string; after?: string } }>(
      '/v1/assets',
      { schema: { querystring: pageQuerySchema() } },
      async (request) => {
        const principal = principalOf(request);
        requirePersonal(principal);
        return listAccountAssets(deps.store.db, principal.accountId, request.query);
      },
    );

    const content = async (
      request: FastifyRequest<{ Params: { id: string } }>,
      reply: FastifyReply,
    ) => {
      const principal = principalOf(request);
      requirePersonal(principal);
      const row = await ownDeliveredAsset(deps.store.db, principal.accountId, request.params.id);
      return serveContent(request, reply, storage, row);
    };
    scope.get<{ Params: { id: string } }>(
      '/v1/assets/:id/content',
      { exposeHeadRoute: false },
      content,
    );
    scope.head<{ Params: { id: string } }>('/v1/assets/:id/content', content);

    scope.delete<{ Params: { id: string } }>('/v1/assets/:id', async (request) => {
      const principal = principalOf(request);
      requirePersonal(principal);
      await deleteAsset(deps.store.db, {
        accountId: principal.accountId,
        assetId: request.params.id,
        clock: deps.clock,
      });
      return { object: 'asset', id: request.params.id, deleted: true };
    });
  });
}

/**
 * Parses an upload request for `UploadService` (`/v1/assets` and the console's upload alike): the
 * headers (checked here, before any body byte
 * is read), the declared length, the raw body and a signal for a caller that goes away mid-body.
 */
export function parseUpload(
  deps: AppDeps,
  request: FastifyRequest,
  principal: Principal,
): UploadInput {
  const idempotencyKey = readIdempotencyKey(request.headers);
  const label = request.headers['content-type'];
  if (label === undefined || label === '')
    throw invalidInput('Content-Type', 'declare the media type of the file');
  const fileName = headerText(request.headers['x-tollgate-file-name'], 'X-Tollgate-File-Name');
  const modelId = headerText(request.headers['x-tollgate-model'], 'X-Tollgate-Model');
  const model = modelId === undefined ? undefined : deps.catalog.resolveAny(principal, modelId);
  // Node has checked Content-Length's syntax; a chunked body has none.
  const declared = request.headers['content-length'];
  // A caller that disconnects mid-body does not always make the request stream fail.
  const aborted = new AbortController();
  request.raw.once('close', () => {
    if (!request.raw.complete) aborted.abort(new Error('the caller went away mid-upload'));
  });
  // A body cut off mid-way ends in an `aborted` error that Node emits on the request a tick or two
  // after the socket closed, by when the body's readers (the prefix reader, the staging pipe) may
  // have let go of it. With no listener left that error is an uncaught exception, the end of the
  // process (seen once in CI, upload-cut-off.test.ts). The caller going away is handled through
  // `signal`; this listener only keeps that late error from reaching the process.
  request.raw.on('error', ignoreLateBodyError);
  return {
    requestId: request.id,
    principal,
    idempotencyKey,
    label,
    fileName,
    modelId,
    model,
    declaredBytes: declared === undefined ? undefined : Number(declared),
    // An empty request body is not parsed at all: an empty stream, refused by the service.
    body: request.body instanceof Readable ? request.body : Readable.from([]),
    signal: aborted.signal,
  };
}

function ignoreLateBodyError(): void {}

function headerText(value: string | string[] | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.length > 255 ||
    [...value].some((character) => character.charCodeAt(0) < 0x20)
  )
    throw invalidInput(name, 'must be 1 to 255 printable characters');
  return value;
}
