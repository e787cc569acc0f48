import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every `/v1` operation as registered (`GET /v1/requests/{id}`), HEAD left out. */
    readonly v1Routes: ReadonlySet<string>;
  }
}

/**
 * Records every `/v1` route as Fastify registers it, so a test can hold the OpenAPI document to
 * the routes that really exist (a route hidden from the document, or never documented, fails
 * test/openapi/openapi-document.test.ts). Register before any route.
 */
export function registerRouteCatalog(app: FastifyInstance): void {
  const routes = new Set<string>();
  app.decorate('v1Routes', routes);
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/v1/') || route.url === '/v1/openapi.json') return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    for (const method of methods) if (method !== 'HEAD') routes.add(`${method} ${path}`);
  });
}
