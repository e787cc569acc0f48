import type { FastifyInstance } from 'fastify';

/** A `/console/api` route as registered: what its OpenAPI operation is built from. */
export interface ConsoleRoute {
  readonly method: string;
  /** In OpenAPI's form: `/console/api/keys/{id}/disable`. */
  readonly path: string;
  /** Open without a session (`config.consolePublic`: sign-in, invitations, the document). */
  readonly public: boolean;
  /** The route's query schema, as Ajv validates it (its properties become parameters). */
  readonly querystring: unknown;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every `/v1` operation as registered (`GET /v1/requests/{id}`), HEAD left out. */
    readonly v1Routes: ReadonlySet<string>;
    /** Every `/console/api` operation as registered (`GET /console/api/keys`), HEAD left out. */
    readonly consoleRoutes: ReadonlyMap<string, ConsoleRoute>;
  }
}

/** A Fastify route URL in OpenAPI's form: `/console/api/keys/:id` → `/console/api/keys/{id}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * Records every `/v1` and `/console/api` route as Fastify registers it, so each OpenAPI
 * document can be held to the routes that really exist (a route hidden from its document, or
 * never documented, fails test/openapi/openapi-document.test.ts and
 * test/console/console-openapi.test.ts). Register before any route. Wildcard routes (the
 * console's "no such operator route" catch-all) are no operation and are not recorded.
 */
export function registerRouteCatalog(app: FastifyInstance): void {
  const routes = new Set<string>();
  const consoleRoutes = new Map<string, ConsoleRoute>();
  app.decorate('v1Routes', routes);
  app.decorate('consoleRoutes', consoleRoutes);
  app.addHook('onRoute', (route) => {
    const isV1 = route.url.startsWith('/v1/') && route.url !== '/v1/openapi.json';
    const isConsole = route.url.startsWith('/console/api/') && !route.url.includes('*');
    if (!isV1 && !isConsole) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const path = openApiPath(route.url);
    for (const method of methods) {
      if (method === 'HEAD') continue;
      if (isV1) routes.add(`${method} ${path}`);
      else
        consoleRoutes.set(`${method} ${path}`, {
          method,
          path,
          public: route.config?.consolePublic === true,
          querystring: route.schema?.querystring,
        });
    }
  });
}
