import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { claimObject } from '../../assets/asset-objects.js';
import { assetNotFound, deleteAsset } from '../../assets/asset-uses.js';
import { assetView } from '../../assets/asset-view.js';
import { TooLarge, type AssetStorage } from '../../assets/local-storage.js';
import { normaliseLabel, probeFile, ProbeError } from '../../assets/probe.js';
import { parseRange } from '../../assets/range.js';
import { checkRequirements } from '../../assets/requirements.js';
import { ApiError, invalidInput } from '../../errors/api-error.js';
import { fingerprint, readIdempotencyKey } from '../../requests/idempotency.js';
import { principalOf, requirePersonal } from '../plugins/authenticate.js';
import type { AppDeps } from '../deps.js';
import { finishAndCount } from '../billed-request.js';

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

    scope.post('/v1/assets', async (request, reply) => {
      const answer = await upload(deps, storage, request, reply);
      return reply.code(answer.status).send(answer.body);
    });

    scope.get<{ Querystring: { limit?: string; after?: string } }>(
      '/v1/assets',
      async (request) => {
        const principal = principalOf(request);
        requirePersonal(principal);
        const limit = request.query.limit === undefined ? 20 : Number(request.query.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 100)
          throw invalidInput('limit', 'must be an integer from 1 to 100');
        let query = deps.store.db
          .selectFrom('assets')
          .selectAll()
          .where('account_id', '=', principal.accountId)
          .where('deleted_at', 'is', null);
        if (request.query.after !== undefined) {
          const cursor = await deps.store.db
            .selectFrom('assets')
            .select(['created_at', 'id'])
            .where('id', '=', request.query.after)
            .where('account_id', '=', principal.accountId)
            .executeTakeFirst();
          if (cursor === undefined)
            throw invalidInput('after', 'is not an asset id of this account');
          query = query.where((eb) =>
            eb.or([
              eb('created_at', '<', cursor.created_at),
              eb.and([eb('created_at', '=', cursor.created_at), eb('id', '<', cursor.id)]),
            ]),
          );
        }
        const rows = await query
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(limit + 1)
          .execute();
        const page = rows.slice(0, limit);
        return {
          object: 'list',
          data: page.map(assetView),
          has_more: rows.length > limit,
          next_cursor: rows.length > limit ? (page[page.length - 1]?.id ?? null) : null,
        };
      },
    );

    const content = async (
      request: FastifyRequest<{ Params: { id: string } }>,
      reply: FastifyReply,
    ) => {
      const principal = principalOf(request);
      requirePersonal(principal);
      const row = await ownAsset(deps, principal.accountId, request.params.id);
      const etag = `"${row.sha256}"`;
      void reply
        .header('etag', etag)
        .header('last-modified', new Date(row.created_at).toUTCString())
        .header('accept-ranges', 'bytes')
        .header('cache-control', 'private, max-age=0');
      const ifNoneMatch = request.headers['if-none-match'];
      if (
        ifNoneMatch !== undefined &&
        (ifNoneMatch === '*' ||
          ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag))
      ) {
        return reply.code(304).send();
      }
      const ifRange = request.headers['if-range'];
      const rangeHeader =
        ifRange === undefined || ifRange === etag ? request.headers.range : undefined;
      const range = parseRange(rangeHeader, row.bytes);
      if (range.kind === 'unsatisfiable')
        return reply
          .code(416)
          .header('content-range', `bytes */${row.bytes}`)
          .send(
            new ApiError(
              'INVALID_INPUT',
              'the requested range is outside the content',
              'Range',
            ).toBody(request.id),
          );
      void reply.type(row.media_type);
      if (range.kind === 'single') {
        void reply
          .code(206)
          .header('content-range', `bytes ${range.start}-${range.end}/${row.bytes}`)
          .header('content-length', range.end - range.start + 1);
        return request.method === 'HEAD'
          ? reply.send()
          : reply.send(await storage.open(row.sha256, range));
      }
      void reply.header('content-length', row.bytes);
      return request.method === 'HEAD' ? reply.send() : reply.send(await storage.open(row.sha256));
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
        now: deps.clock.now(),
      });
      return { object: 'asset', id: request.params.id, deleted: true };
    });
  });
}

async function ownAsset(deps: AppDeps, accountId: string, id: string) {
  const row = await deps.store.db
    .selectFrom('assets')
    .selectAll()
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (row === undefined || row.account_id !== accountId) throw assetNotFound(id);
  return row;
}

/**
 * Upload: stage the raw body (hashed, capped), claim the idempotency key with the content hash
 * as the fingerprint, probe the real format, check label and model requirements, then move the
 * bytes to their content address and record the asset. Any refusal deletes the staged file.
 */
async function upload(
  deps: AppDeps,
  storage: AssetStorage,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<{ status: number; body: unknown }> {
  const principal = principalOf(request);
  const idempotencyKey = readIdempotencyKey(request.headers);
  const label = request.headers['content-type'];
  if (label === undefined || label === '')
    throw invalidInput('Content-Type', 'declare the media type of the file');
  const fileName = headerText(request.headers['x-tollgate-file-name'], 'X-Tollgate-File-Name');
  const modelId = headerText(request.headers['x-tollgate-model'], 'X-Tollgate-Model');
  const model = modelId === undefined ? undefined : deps.catalog.resolveAny(principal, modelId);
  let staged;
  try {
    // An empty request body is not parsed at all: stage an empty stream, refused below.
    const body = request.body instanceof Readable ? request.body : Readable.from([]);
    // A caller that disconnects mid-body does not always make the request stream fail.
    const aborted = new AbortController();
    request.raw.once('close', () => {
      if (!request.raw.complete) aborted.abort();
    });
    staged = await storage.stage(body, deps.config.limits.asset_bytes, aborted.signal);
  } catch (error) {
    if (error instanceof TooLarge) throw new ApiError('BODY_TOO_LARGE', error.message);
    throw error;
  }
  try {
    if (staged.bytes === 0) throw invalidInput('body', 'the upload is empty');
    const identity = {
      requestId: request.id,
      principal,
      idempotencyKey,
      fingerprint: fingerprint('POST', '/v1/assets', {
        sha256: staged.sha256,
        label: normaliseLabel(label),
        fileName,
        model: modelId,
      }),
      method: 'POST',
      path: '/v1/assets',
      model: modelId ?? null,
    };
    const claim = await deps.requests.claim(identity, null);
    if (claim.kind === 'refused') throw claim.error;
    if (claim.kind === 'replay') {
      void reply
        .header('idempotent-replayed', 'true')
        .header('x-service-request-id', claim.requestId);
      return { status: claim.status, body: claim.body };
    }
    let body: unknown;
    try {
      const probe = await probeFile(staged.tempPath).catch((error: unknown) => {
        if (error instanceof ProbeError)
          throw error.reason === 'unsupported'
            ? new ApiError('UNSUPPORTED_MEDIA_TYPE', error.message)
            : invalidInput('body', error.message);
        throw error;
      });
      if (normaliseLabel(label) !== probe.mediaType)
        throw invalidInput(
          'Content-Type',
          `the file is labelled ${normaliseLabel(label)} but its bytes are ${probe.mediaType}`,
        );
      if (model !== undefined) checkRequirements(model, probe, staged.bytes);
      // Claimed before the bytes are placed, so the sweeper cannot reclaim them under us.
      await claimObject(deps.store.db, staged.sha256, () => deps.clock.now());
      await storage.commit(staged);
      const row = {
        id: deps.ids.next('asset'),
        account_id: principal.accountId,
        key_id: principal.keyId,
        sha256: staged.sha256,
        media_type: probe.mediaType,
        bytes: staged.bytes,
        width: probe.width,
        height: probe.height,
        duration_ms:
          probe.durationSeconds === null ? null : Math.round(probe.durationSeconds * 1000),
        file_name: fileName ?? null,
        model: modelId ?? null,
        created_at: deps.clock.now(),
        deleted_at: null,
      };
      await deps.store.db.insertInto('assets').values(row).execute();
      body = { data: assetView(row) };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return finishAndCount(
        deps,
        { identity, holdId: null },
        { kind: 'failed', error, upstreamRequestId: null },
      );
    }
    return finishAndCount(
      deps,
      { identity, holdId: null },
      {
        kind: 'succeeded',
        status: 201,
        body,
        usage: {},
        amount: 0,
        pricingRule: 'assets: uploads are free',
        upstreamRequestId: null,
      },
    );
  } finally {
    // Before answering: a refused upload has left nothing behind by the time the caller hears.
    await storage.discard(staged);
  }
}

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
