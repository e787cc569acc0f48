import { createHash, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import type { FastifyInstance, onRequestAsyncHookHandler } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import type { AppDeps } from '../deps.js';
import { bearerTokenOrNothing } from '../plugins/admin-token.js';
import { soleAuthorizationHeader } from '../plugins/authenticate.js';

/**
 * Liveness, readiness and metrics (docs/operations.md). No API key: `/healthz` and `/readyz` are
 * always open (load balancers and orchestrators call them bare); `/metrics` is open unless a
 * metrics token is configured.
 */
export function registerOperations(app: FastifyInstance, deps: AppDeps): void {
  const hide = { schema: { hide: true } };
  app.get('/healthz', hide, async () => ({ status: 'ok' }));
  app.get('/readyz', hide, async (_request, reply) => {
    if (deps.readiness.draining)
      return reply.code(503).send({ status: 'draining', database: deps.store.dialect });
    try {
      await sql`select 1`.execute(deps.store.db);
      return { status: 'ready', database: deps.store.dialect };
    } catch {
      return reply.code(503).send({ status: 'not_ready', database: deps.store.dialect });
    }
  });
  const guard = deps.metricsToken === undefined ? [] : [requireMetricsToken(deps.metricsToken)];
  app.get('/metrics', { ...hide, onRequest: guard }, async (_request, reply) => {
    void reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}

/**
 * Refuses a scrape without `Authorization: Bearer <token>`: 401 `UNAUTHENTICATED` in the usual
 * error shape. The comparison is of SHA-256 digests with `timingSafeEqual`, so its time says
 * nothing about how much of a guess was right (and the lengths compared are always equal).
 */
function requireMetricsToken(token: string): onRequestAsyncHookHandler {
  const expected = digest(token);
  return async (request) => {
    const given = bearerTokenOrNothing(soleAuthorizationHeader(request));
    if (given === undefined || !timingSafeEqual(digest(given), expected))
      throw new ApiError(
        'UNAUTHENTICATED',
        given === undefined
          ? 'metrics are protected: send Authorization: Bearer <TOLLGATE_METRICS_TOKEN>'
          : 'wrong metrics token',
        undefined,
        { 'www-authenticate': 'Bearer realm="metrics"' },
      );
  };
}

const digest = (text: string) => createHash('sha256').update(text).digest();
