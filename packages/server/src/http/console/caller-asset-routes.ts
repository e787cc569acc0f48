import type { AccountShare, AssetDeleted, OwnerShareList } from '@tollgate/protocol';
import type { FastifyInstance } from 'fastify';
import { listAccountAssets } from '../../assets/asset-listing.js';
import { deleteAsset } from '../../assets/asset-uses.js';
import { parseUpload } from '../routes/assets.js';
import { pageQuerySchema, type PageQueryString } from '../page-query.js';
import { answerClaim } from '../claim-answer.js';
import { parseShareBody, shareBodySchema, type ShareBody } from '../../shares/share-input.js';
import { shareServiceOf } from '../../shares/share-service.js';
import type { AppDeps } from '../deps.js';
import { memberAccountOf } from './console-auth.js';
import { consolePrincipal, consoleRequestIdentity } from './console-principal.js';
import { withKeyNames } from './console-names.js';

type PageQuery = { Querystring: PageQueryString };

/**
 * The owner's assets and shares (docs/console.md, "Assets and shares"). Uploads go through the
 * very `UploadService` of `/v1/assets` (its limits, its probes, its staging budget per account);
 * the list and the deletion are `/v1`'s functions; shares are `ShareService`'s, asked for with the
 * gateway's share-link secret (no key is at hand: docs/decisions/0016-console-share-links.md).
 * Preview and download are `GET /console/api/assets/{id}/content` (caller-task-routes.ts).
 */
export function registerCallerAssetRoutes(scope: FastifyInstance, deps: AppDeps): void {
  const shares = shareServiceOf(deps);

  scope.get<PageQuery>(
    '/console/api/assets',
    { schema: { querystring: pageQuerySchema() } },
    async (request) => listAccountAssets(deps.store.db, memberAccountOf(request), request.query),
  );

  void scope.register(async (raw) => {
    // The body is the file itself, any media type, streamed: as `POST /v1/assets` takes it.
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    raw.post('/console/api/assets', async (request, reply) => {
      const answer = await deps.uploads.upload(
        parseUpload(deps, request, consolePrincipal(request)),
      );
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
    });
  });

  scope.delete<{ Params: { id: string } }>(
    '/console/api/assets/:id',
    async (request): Promise<AssetDeleted> => {
      await deleteAsset(deps.store.db, {
        accountId: memberAccountOf(request),
        assetId: request.params.id,
        clock: deps.clock,
      });
      return { object: 'asset', id: request.params.id, deleted: true };
    },
  );

  scope.get<PageQuery>(
    '/console/api/shares',
    { schema: { querystring: pageQuerySchema() } },
    async (request): Promise<OwnerShareList> => {
      const page = await shares.listForAccount(memberAccountOf(request), request.query);
      // A key's share names its key (docs/console.md, "Names, not ids").
      return { ...page, data: await withKeyNames(deps.store.db, page.data) };
    },
  );

  scope.get<{ Params: { id: string } }>(
    '/console/api/shares/:id',
    async (request): Promise<AccountShare> =>
      shares.readForAccount(memberAccountOf(request), request.params.id),
  );

  scope.post<{ Body: ShareBody }>(
    '/console/api/shares',
    {
      schema: { body: shareBodySchema },
      // Who may call is answered before what was sent: an operator gets 403, not a 400 on the body.
      preValidation: async (request) => {
        memberAccountOf(request);
      },
    },
    async (request, reply) => {
      const target = parseShareBody(request.body);
      // 202 pending_review (200: this user already has this asset awaiting review), as /v1 says.
      return answerClaim(
        reply,
        await shares.create(consoleRequestIdentity(request), { kind: 'console' }, target),
      );
    },
  );

  scope.delete<{ Params: { id: string } }>(
    '/console/api/shares/:id',
    async (request): Promise<AccountShare> =>
      shares.withdrawForAccount(
        memberAccountOf(request),
        request.params.id,
        consolePrincipal(request),
      ),
  );
}
