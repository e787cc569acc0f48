import type { CallerAccount } from '@tollgate/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { jsonSchemaOf } from '../../errors/input-schema.js';
import { principalOf, requirePersonal } from '../plugins/authenticate.js';
import type { AppDeps } from '../deps.js';

/** `POST /v1/redemptions`: the code, and nothing else. */
const redemptionBody = z.strictObject({ code: z.string().min(1).max(100) });
const redemptionBodySchema = jsonSchemaOf(redemptionBody);
type RedemptionBody = z.output<typeof redemptionBody>;

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

  scope.post<{ Body: RedemptionBody }>(
    '/v1/redemptions',
    {
      // A redemption code is used once by its own rule (accounts), not by an Idempotency-Key.
      config: { businessPost: false },
      schema: { body: redemptionBodySchema },
    },
    async (request) => {
      const principal = principalOf(request);
      requirePersonal(principal);
      return deps.accounts.redeem(principal.accountId, request.body);
    },
  );
}
