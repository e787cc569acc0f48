import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.js';

/** Liveness, readiness and metrics; no API key needed. */
export function registerOperations(app: FastifyInstance, deps: AppDeps): void {
  const hide = { schema: { hide: true } };
  app.get('/healthz', hide, async () => ({ status: 'ok' }));
  app.get('/readyz', hide, async (_request, reply) => {
    try {
      await sql`select 1`.execute(deps.store.db);
      return { status: 'ready', database: deps.store.dialect };
    } catch {
      return reply.code(503).send({ status: 'not_ready', database: deps.store.dialect });
    }
  });
  app.get('/metrics', hide, async (_request, reply) => {
    void reply.header('content-type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
