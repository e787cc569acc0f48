import type { CallerAccount } from '@tollgate/protocol';
import type { FastifyInstance } from 'fastify';
import { principalOf, requirePersonal } from '../plugins/authenticate.js';
import type { AppDeps } from '../deps.js';

/**
 * `GET /v1/models` (exactly what this key may call) and the caller's own account with its
 * budgets. Budgets are not repeated on `/v1/models`: they limit spend on every model alike, and
 * `GET /v1/account` is where a key reads them (docs/billing.md, "Budgets").
 */
export function registerModels(scope: FastifyInstance, deps: AppDeps): void {
  scope.get('/v1/models', async (request) => ({
    object: 'list',
    data: await deps.catalog.list(principalOf(request)),
  }));

  scope.get('/v1/account', async (request): Promise<CallerAccount> => {
    const principal = principalOf(request);
    requirePersonal(principal);
    const [account, keyBudget] = await Promise.all([
      deps.accounts.get(principal.accountId),
      deps.keys.budgetOf(principal.keyId),
    ]);
    return { ...account, key_budget: keyBudget };
  });

  scope.post<{ Body: { code: string } }>(
    '/v1/redemptions',
    {
      // A redemption code is used once by its own rule (accounts), not by an Idempotency-Key.
      config: { businessPost: false },
      schema: {
        body: {
          type: 'object',
          required: ['code'],
          additionalProperties: false,
          properties: { code: { type: 'string', minLength: 1, maxLength: 100 } },
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      requirePersonal(principal);
      return deps.accounts.redeem(principal.accountId, request.body);
    },
  );
}
