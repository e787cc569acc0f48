import type {
  Account,
  ApiKey,
  ApiKeyList,
  ModelList,
  NewApiKey,
  RotatedApiKey,
} from '@tollgate/protocol';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors/api-error.js';
import { memberAccountOf } from './console-auth.js';
import type { ConsoleDeps } from './console-deps.js';
import { bodyObject } from './session-routes.js';

/**
 * The caller's pages (docs/console.md): a member's account, its keys and redemption codes (its
 * records: caller-request-routes.ts; its tasks: caller-task-routes.ts). Each route calls the
 * same service `/v1` or `/admin/v1` calls, bounded to the member's own account.
 */
export function registerCallerRoutes(scope: FastifyInstance, deps: ConsoleDeps): void {
  scope.get('/console/api/account', async (request): Promise<Account> =>
    deps.accounts.get(memberAccountOf(request)),
  );

  scope.get('/console/api/keys', async (request): Promise<ApiKeyList> => ({
    object: 'list',
    data: await deps.keys.list(memberAccountOf(request)),
  }));

  scope.post<{ Body: unknown }>('/console/api/keys', async (request): Promise<NewApiKey> => {
    const body = bodyObject(request.body);
    return deps.keys.create(memberAccountOf(request), {
      name: body['name'],
      kind: body['kind'],
      models: body['models'],
      expires_at: body['expires_at'],
      idempotency: body['idempotency'],
    });
  });

  scope.post<{ Params: { id: string } }>(
    '/console/api/keys/:id/disable',
    async (request): Promise<ApiKey> => {
      await requireOwnKey(deps, memberAccountOf(request), request.params.id);
      return deps.keys.disable(request.params.id);
    },
  );

  // The rotation of the admin API (docs/keys.md, "Rotation"): the new key's plaintext is in this
  // answer only; `expire_old_in_seconds` keeps the old key working that long.
  scope.post<{ Params: { id: string }; Body: unknown }>(
    '/console/api/keys/:id/rotate',
    async (request, reply) => {
      await requireOwnKey(deps, memberAccountOf(request), request.params.id);
      const body =
        request.body === undefined || request.body === null ? {} : bodyObject(request.body);
      const rotated: RotatedApiKey = await deps.keys.rotate(request.params.id, {
        expire_old_in_seconds: body['expire_old_in_seconds'],
      });
      return reply.code(201).send(rotated);
    },
  );

  // The models a key of the account may be allowed (the create form's allowlist), as
  // `GET /v1/models` lists them for a key without an allowlist.
  scope.get('/console/api/models', async (request): Promise<ModelList> => {
    memberAccountOf(request);
    return { object: 'list', data: await deps.catalog.list({ models: null }) };
  });

  scope.post<{ Body: unknown }>('/console/api/redemptions', async (request): Promise<Account> =>
    deps.accounts.redeem(memberAccountOf(request), { code: bodyObject(request.body)['code'] }),
  );
}

/** 404, as for a missing key, unless the key is the account's: another account's key is absent. */
async function requireOwnKey(deps: ConsoleDeps, accountId: string, keyId: string): Promise<void> {
  const owned = (await deps.keys.list(accountId)).some((key) => key.id === keyId);
  if (!owned) throw notFound('api key');
}
