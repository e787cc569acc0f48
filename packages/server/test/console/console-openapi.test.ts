import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleOpenApiDocument } from '../../src/http/console/console-openapi.js';
import { consoleCall, consoleUser, type ConsoleSession } from '../helpers/console-session.js';
import { dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
interface Operation {
  security: Record<string, unknown>[];
  requestBody?: unknown;
  'x-tollgate-access': 'public' | 'session' | 'member' | 'operator';
}
interface ConsoleDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { in: string; name: string }> };
}

const SETTLE_BODY = {
  actual_amount: 1,
  price_version: 'sim-image@1',
  confirmation: 'settle_original_approved',
};

/** `GET /console/api/keys/{id}/disable` with a made-up id in every path parameter. */
function operations(document: ConsoleDocument) {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      name: `${method.toUpperCase()} ${path}`,
      method: method.toUpperCase() as Method,
      url: path.replace(/\{[^}]+\}/g, 'x_missing'),
      operation,
    })),
  );
}

/**
 * Risks: the console API's published document drifts from the routes (a route missing, a route
 * gone), or claims an authentication the gateway does not enforce (a state-changing call without
 * its CSRF token, an operator route open to a member).
 */
describe('the console API’s OpenAPI document', () => {
  let gateway: TestGateway;
  let document: ConsoleDocument;
  let member: ConsoleSession;
  let operator: ConsoleSession;
  beforeAll(async () => {
    gateway = await startGateway(dialects[0]!);
    const { accountId } = await gateway.account(0);
    member = await consoleUser(gateway, 'member@example.test', 'member', accountId);
    operator = await consoleUser(gateway, 'ops@example.test', 'operator');
    document = (
      await gateway.app.inject({ method: 'GET', url: '/console/api/openapi.json' })
    ).json();
  });
  afterAll(async () => gateway.close());

  it('is valid OpenAPI 3.1, served without a session', async () => {
    const response = await gateway.app.inject({ method: 'GET', url: '/console/api/openapi.json' });
    expect(response.statusCode).toBe(200);
    const served = response.json<{ openapi: string; paths: Record<string, unknown> }>();
    expect(served.openapi).toBe('3.1.0');
    const result = await new Validator().validate(served);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(Object.keys(document.paths).every((path) => path.startsWith('/console/api/'))).toBe(
      true,
    );
  });

  it('describes exactly the /console/api routes the gateway registers', () => {
    const documented = operations(document).map((entry) => entry.name);
    expect(documented.sort()).toEqual([...gateway.app.consoleRoutes.keys()].sort());
    expect(documented.length).toBeGreaterThanOrEqual(60);
  });

  it('refuses to build when a registered route has no row, or a row no route', () => {
    const routes = new Map(gateway.app.consoleRoutes);
    routes.set('GET /console/api/undocumented', {
      method: 'GET',
      path: '/console/api/undocumented',
      public: false,
      querystring: undefined,
    });
    expect(() => consoleOpenApiDocument(routes)).toThrow(/undocumented is not in/);
    const fewer = new Map(gateway.app.consoleRoutes);
    fewer.delete('GET /console/api/account');
    expect(() => consoleOpenApiDocument(fewer)).toThrow(/account is not a registered route/);
  });

  it('names the session cookie and the CSRF header as its security schemes', () => {
    expect(document.components.securitySchemes['session']).toMatchObject({
      in: 'cookie',
      name: 'tollgate_console',
    });
    expect(document.components.securitySchemes['csrf']).toMatchObject({
      in: 'header',
      name: 'X-CSRF-Token',
    });
  });

  it('every operation it says needs a session is 401 without one', async () => {
    for (const { name, method, url, operation } of operations(document)) {
      if (operation.security.length === 0) continue;
      const response = await gateway.app.inject({ method, url, payload: {} });
      expect(response.statusCode, name).toBe(401);
    }
  });

  it('every state-changing operation it says needs the CSRF token is 403 without it', async () => {
    let checked = 0;
    for (const { name, method, url, operation } of operations(document)) {
      const needsCsrf = operation.security.some((scheme) => 'csrf' in scheme);
      expect(needsCsrf, name).toBe(method !== 'GET' && operation.security.length > 0);
      if (!needsCsrf) continue;
      const session = operation['x-tollgate-access'] === 'operator' ? operator : member;
      const response = await consoleCall(gateway, session, method, url, { body: {}, csrf: false });
      expect(response.statusCode, name).toBe(403);
      expect(response.json(), name).toMatchObject({
        error: { code: 'PERMISSION_DENIED', param: 'X-CSRF-Token' },
      });
      checked += 1;
    }
    expect(checked).toBeGreaterThanOrEqual(25);
  });

  it('each operator operation refuses a member, and each member operation an operator (403)', async () => {
    for (const { name, method, url, operation } of operations(document)) {
      const access = operation['x-tollgate-access'];
      if (access !== 'operator' && access !== 'member') continue;
      const session = access === 'operator' ? member : operator;
      // A body of the right shape for the strictest route (a task's settle), so that the role
      // is what refuses, not the body.
      const response = await consoleCall(gateway, session, method, url, {
        body: operation.requestBody === undefined ? undefined : SETTLE_BODY,
      });
      expect(response.statusCode, `${name}: ${response.body}`).toBe(403);
    }
  });
});
