import { wireSchemas } from '@tollgate/protocol/wire-schemas';
import type { FastifyInstance } from 'fastify';
import type { ConsoleRoute } from '../openapi/route-catalog.js';
import { SESSION_COOKIE } from './console-auth.js';
import {
  CONSOLE_OPERATIONS,
  type ConsoleAnswer,
  type ConsoleOperation,
} from './console-operations.js';

type Json = Record<string, unknown>;

const SAFE_METHODS = new Set(['GET', 'HEAD']);

const ROLE_NOTE: Readonly<Record<ConsoleOperation['access'], string>> = {
  public: 'No session needed.',
  session: 'Any signed-in console user.',
  member: 'A member (its own account only); an operator is refused with 403.',
  operator: 'The operator role; a member is refused with 403 before anything is read.',
};

const ERROR_RESPONSE = {
  description: 'An error in the gateway’s error shape (its `param` names the field at fault)',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
} as const;

function successResponse(answer: ConsoleAnswer): Json {
  const json = { 'application/json': { schema: { type: 'object' } } };
  const csv = { 'text/csv': { schema: { type: 'string' } } };
  switch (answer) {
    case 'none':
      return { description: 'Done; no body' };
    case 'csv':
      return { description: 'CSV (RFC 4180, a header row)', content: csv };
    case 'json_or_csv':
      return { description: 'JSON, or CSV when asked for', content: { ...json, ...csv } };
    case 'binary':
      return {
        description: 'The stored bytes, with their media type',
        content: {
          '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
        },
      };
    case 'json':
      return { description: 'A JSON object (docs/console.md)', content: json };
  }
}

/** Query parameters from the route's own query schema, else from the table. */
function queryParameters(route: ConsoleRoute, operation: ConsoleOperation): Json[] {
  const schema = route.querystring as { properties?: Record<string, unknown> } | undefined;
  const properties =
    schema?.properties ??
    Object.fromEntries((operation.query ?? []).map((name) => [name, { type: 'string' }]));
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: false,
    schema: property,
  }));
}

function operationObject(route: ConsoleRoute, operation: ConsoleOperation): Json {
  const pathParameters = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => ({
    name: match[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const idempotency = operation.idempotent
    ? [{ name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string' } }]
    : [];
  const changes = !SAFE_METHODS.has(route.method);
  // A session's cookie on every call but the public ones; its CSRF token on each that changes.
  const security = route.public ? [] : [changes ? { session: [], csrf: [] } : { session: [] }];
  const parameters = [...pathParameters, ...queryParameters(route, operation), ...idempotency];
  const status = operation.status ?? 200;
  return {
    summary: operation.summary,
    description: ROLE_NOTE[operation.access],
    tags: [operation.access === 'operator' ? 'operator' : route.public ? 'sign-in' : 'caller'],
    'x-tollgate-access': operation.access,
    security,
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(operation.body === undefined
      ? {}
      : {
          requestBody: {
            required: operation.body.length > 0 || route.method === 'PUT',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  ...(operation.body.length === 0
                    ? {}
                    : {
                        properties: Object.fromEntries(operation.body.map((name) => [name, {}])),
                      }),
                },
              },
            },
          },
        }),
    responses: {
      [String(status)]: successResponse(operation.answer ?? (status === 204 ? 'none' : 'json')),
      '400': ERROR_RESPONSE,
      '401': ERROR_RESPONSE,
      '403': ERROR_RESPONSE,
      '404': ERROR_RESPONSE,
      '429': ERROR_RESPONSE,
    },
  };
}

/**
 * The console API's own OpenAPI 3.1 document (docs/openapi.md, "The console's document"), built
 * from the registered `/console/api` routes and the table of console-operations.ts. Throws when
 * the two disagree, so a route added without its row (or a row left behind) stops the gateway
 * from starting rather than publishing a document that lies.
 */
export function consoleOpenApiDocument(routes: ReadonlyMap<string, ConsoleRoute>): Json {
  // Every disagreement at once, so that one start names all the rows to write.
  const problems = Object.keys(CONSOLE_OPERATIONS)
    .filter((name) => !routes.has(name))
    .map((name) => `${name} is not a registered route`);
  const paths: Record<string, Json> = {};
  for (const [name, route] of routes) {
    const operation = CONSOLE_OPERATIONS[name];
    if (operation === undefined) {
      problems.push(`${name} is not in http/console/console-operations.ts`);
      continue;
    }
    if (route.public !== (operation.access === 'public'))
      problems.push(`${name} is ${route.public ? '' : 'not '}public`);
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operationObject(route, operation);
  }
  if (problems.length > 0) throw new Error(`console OpenAPI: ${problems.join('; ')}`);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tollgate console API',
      version: '0.1.0',
      description:
        'The web console’s API (docs/console.md): a console session, never an API key. ' +
        'Sign in with POST /console/api/session; send the csrf_token of GET /console/api/session ' +
        'as X-CSRF-Token on every state-changing call. Amounts are integer micro-yuan.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: '/', description: 'This gateway: the origin the document was fetched from' }],
    paths,
    components: {
      securitySchemes: {
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description: 'The console session cookie set by POST /console/api/session',
        },
        csrf: {
          type: 'apiKey',
          in: 'header',
          name: 'X-CSRF-Token',
          description: 'The session’s csrf_token, on every POST, PUT, PATCH and DELETE',
        },
      },
      schemas: { ErrorBody: wireSchemas['ErrorBody'], ErrorCode: wireSchemas['ErrorCode'] },
    },
  };
}

/**
 * `GET /console/api/openapi.json`, public like `/v1/openapi.json` (it holds no secret). Built
 * once every route is registered; a table out of step with the routes fails `ready()`.
 */
export function registerConsoleOpenApi(scope: FastifyInstance, app: FastifyInstance): void {
  let document: Json | undefined;
  app.addHook('onReady', async () => {
    document = consoleOpenApiDocument(app.consoleRoutes);
  });
  scope.get(
    '/console/api/openapi.json',
    { config: { consolePublic: true }, schema: { hide: true } },
    async () => document ?? consoleOpenApiDocument(app.consoleRoutes),
  );
}
