import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { parseInput } from '../../errors/input-schema.js';
import { parseShareBody, shareBodySchema, type ShareBody } from '../../shares/share-input.js';
import { shareServiceOf, type ShareOwner } from '../../shares/share-service.js';
import { answerClaim as answer } from '../claim-answer.js';
import { requestIdentity } from '../billed-request.js';
import type { AppDeps } from '../deps.js';
import type { OperatorActions } from '../../operator/operator-actions.js';
import { shareDecisionInput } from '../../operator/operator-inputs.js';
import { adminActor } from './admin-audit.js';
import { adminBodyOf } from './admin-bodies.js';
import { bearerToken, principalOf, requirePersonal } from '../plugins/authenticate.js';
import { pageQuerySchema } from '../page-query.js';
import { serveContent } from '../serve-content.js';
import { CREDENTIAL_ROUTES } from '../../log-redaction.js';

/**
 * How caches may keep a public share (docs/shares.md, "Caching"): anyone may store it, nobody
 * may use it without asking us first (`no-cache`), so a revoked share stops serving at once
 * everywhere, and an unchanged one costs a 304 (the ETag is its content address).
 */
const PUBLIC_CACHE_CONTROL = 'public, no-cache';

/**
 * Content served to anyone on the gateway's own origin, beyond what every content route sends
 * (`INERT_CONTENT_HEADERS` of serve-content.ts: never sniffed, never run as a page): never
 * indexed, and never sending its token onwards in a Referer.
 */
const PUBLIC_HEADERS = {
  'referrer-policy': 'no-referrer',
  'x-robots-tag': 'noindex, nofollow',
} as const;

/** `/v1/shares` (docs/shares.md): owners ask for, read, list and withdraw their shares. */
export function registerShares(v1: FastifyInstance, deps: AppDeps): void {
  const shares = shareServiceOf(deps);

  v1.post<{ Body: ShareBody }>(
    '/v1/shares',
    { schema: { body: shareBodySchema } },
    async (request, reply) => {
      const target = parseShareBody(request.body);
      const principal = principalOf(request);
      // Assets are the account's, read with personal keys only: so is sharing one.
      if (target.kind === 'asset') requirePersonal(principal);
      const identity = requestIdentity(request, null);
      return answer(
        reply,
        await shares.create(identity, { kind: 'api_key', apiKey: ownerOf(request).apiKey }, target),
      );
    },
  );
  v1.get<{ Querystring: { limit?: string; after?: string } }>(
    '/v1/shares',
    { schema: { querystring: pageQuerySchema() } },
    async (request) => shares.list(ownerOf(request), request.query),
  );
  v1.get<{ Params: { id: string } }>('/v1/shares/:id', async (request) =>
    shares.read(ownerOf(request), request.params.id),
  );
  v1.delete<{ Params: { id: string } }>('/v1/shares/:id', async (request) =>
    shares.withdraw(ownerOf(request), request.params.id),
  );
}

/**
 * `GET`/`HEAD /s/{token}`: an approved share's content, no key, Range and ETag as every content
 * route (serve-content.ts). Registered beside the operations routes, outside `/v1`: no API key,
 * no per-key rate limit. The token never reaches a log: the route is a credential route
 * (`CREDENTIAL_ROUTES.publicShare`), whose token `pathForLog` redacts from every access line.
 */
export function registerPublicShares(app: FastifyInstance, deps: AppDeps): void {
  const shares = shareServiceOf(deps);
  const content = async (
    request: FastifyRequest<{ Params: { token: string } }>,
    reply: FastifyReply,
  ) => {
    const object = await shares.publicContent(request.params.token);
    void reply.headers(PUBLIC_HEADERS);
    return serveContent(request, reply, deps.assets, object, PUBLIC_CACHE_CONTROL);
  };
  const hide = { schema: { hide: true } };
  app.get<{ Params: { token: string } }>(
    CREDENTIAL_ROUTES.publicShare,
    { ...hide, exposeHeadRoute: false },
    content,
  );
  app.head<{ Params: { token: string } }>(CREDENTIAL_ROUTES.publicShare, hide, content);
}

/** Share review under `/admin/v1` (docs/admin.md); the admin token is checked by admin.ts. */
export function registerShareReview(
  admin: FastifyInstance,
  deps: AppDeps,
  operator: OperatorActions,
): void {
  const shares = shareServiceOf(deps);
  // Approval may come without a body at all; reject and revoke need one with a reason.
  const reasonBody = (required: boolean) => ({
    schema: { body: adminBodyOf(shareDecisionInput, { absent: !required }) },
  });
  type Decide = { Params: { id: string }; Body: unknown };
  const decide =
    (decision: 'approve' | 'reject' | 'revoke') => async (request: FastifyRequest<Decide>) =>
      operator.decideShare(
        adminActor(request),
        request.params.id,
        decision,
        parseInput(shareDecisionInput, request.body ?? {}),
      );

  admin.get<{ Querystring: { state?: string; limit?: string; after?: string } }>(
    '/admin/v1/shares',
    { schema: { querystring: pageQuerySchema(['state']) } },
    async (request) => shares.listForReview(request.query),
  );
  admin.get<{ Params: { id: string } }>('/admin/v1/shares/:id', async (request) =>
    shares.show(request.params.id),
  );
  const content = async (
    request: FastifyRequest<{ Params: { id: string } }>,
    reply: FastifyReply,
  ) => {
    const object = await shares.reviewContent(request.params.id);
    void reply.headers(PUBLIC_HEADERS);
    return serveContent(request, reply, deps.assets, object, 'private, no-store');
  };
  admin.get<{ Params: { id: string } }>(
    '/admin/v1/shares/:id/content',
    { exposeHeadRoute: false },
    content,
  );
  admin.head<{ Params: { id: string } }>('/admin/v1/shares/:id/content', content);
  admin.post<Decide>('/admin/v1/shares/:id/approve', reasonBody(false), decide('approve'));
  admin.post<Decide>('/admin/v1/shares/:id/reject', reasonBody(true), decide('reject'));
  admin.post<Decide>('/admin/v1/shares/:id/revoke', reasonBody(true), decide('revoke'));
}

/** The calling key and its plaintext, which only computes this key's share tokens. */
function ownerOf(request: FastifyRequest): ShareOwner {
  const apiKey = bearerToken(request);
  if (apiKey === undefined) throw new ApiError('UNAUTHENTICATED', 'missing API key');
  return { principal: principalOf(request), apiKey };
}
