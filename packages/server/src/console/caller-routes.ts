import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors/api-error.js';
import { memberAccountOf } from './console-auth.js';
import type { ConsoleDeps } from './console-deps.js';
import { bodyObject } from './session-routes.js';

/**
 * The caller's pages (docs/console.md): a member's account, its keys and redemption codes (its
 * records: caller-request-routes.ts; its tasks: caller-task-routes.ts). Each route calls the
 * same service `/v1` or `/admin/v1` calls, bounded to the member's own account.
 */
export function registerCallerRoutes(scope: FastifyInstance, deps: ConsoleDeps): void {
  scope.get('/console/api/account', async (request) => deps.accounts.get(memberAccountOf(request)));

  scope.get('/console/api/keys', async (request) => ({
    object: 'list',
    data: await deps.keys.list(memberAccountOf(request)),
  }));

  scope.post<{ Body: unknown }>('/console/api/keys', async (request) => {
    const body = bodyObject(request.body);
    return deps.keys.create(memberAccountOf(request), {
      name: body['name'],
      kind: body['kind'],
      models: body['models'],
      expires_at: body['expires_at'],
    });
  });

  scope.post<{ Params: { id: string } }>('/console/api/keys/:id/disable', async (request) => {
    const accountId = memberAccountOf(request);
    // Another account's key is as absent as one that does not exist.
    const owned = (await deps.keys.list(accountId)).some((key) => key.id === request.params.id);
    if (!owned) throw notFound('api key');
    return deps.keys.disable(request.params.id);
  });

  scope.post<{ Body: unknown }>('/console/api/redemptions', async (request) =>
    deps.accounts.redeem(memberAccountOf(request), { code: bodyObject(request.body)['code'] }),
  );
}
