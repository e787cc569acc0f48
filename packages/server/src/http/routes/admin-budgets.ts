import type { FastifyInstance } from 'fastify';
import { parseInput } from '../../errors/input-schema.js';
import type { OperatorActions } from '../../operator/operator-actions.js';
import { budgetInput } from '../../operator/operator-inputs.js';
import { adminActor } from './admin-audit.js';
import { adminBodyOf } from './admin-bodies.js';

/** `limit` and `window` and nothing else; what each must be is BudgetService's rule. */
const budgetBody = adminBodyOf(budgetInput);

/**
 * Budgets under `/admin/v1` (docs/admin.md): `PUT` sets a key's or an account's budget and
 * answers the key or account with it; `DELETE` removes it. Each is audited (`OperatorActions`).
 */
export function registerAdminBudgets(scope: FastifyInstance, operator: OperatorActions): void {
  scope.put<{ Params: { id: string }; Body: unknown }>(
    '/admin/v1/keys/:id/budget',
    { schema: { body: budgetBody } },
    async (request) =>
      operator.setKeyBudget(
        adminActor(request),
        request.params.id,
        parseInput(budgetInput, request.body),
      ),
  );
  scope.delete<{ Params: { id: string } }>('/admin/v1/keys/:id/budget', async (request) =>
    operator.removeKeyBudget(adminActor(request), request.params.id),
  );
  scope.put<{ Params: { id: string }; Body: unknown }>(
    '/admin/v1/accounts/:id/budget',
    { schema: { body: budgetBody } },
    async (request) =>
      operator.setAccountBudget(
        adminActor(request),
        request.params.id,
        parseInput(budgetInput, request.body),
      ),
  );
  scope.delete<{ Params: { id: string } }>('/admin/v1/accounts/:id/budget', async (request) =>
    operator.removeAccountBudget(adminActor(request), request.params.id),
  );
}
