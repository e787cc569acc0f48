import type { FastifyInstance } from 'fastify';
import { parseInput } from '../../errors/input-schema.js';
import type { OperatorActions } from '../../operator/operator-actions.js';
import { resolveTaskInput } from '../../operator/operator-inputs.js';
import type { AppDeps } from '../deps.js';
import { adminActor } from './admin-audit.js';
import { adminBodyOf } from './admin-bodies.js';

/**
 * Operators' task routes under `/admin/v1` (docs/admin.md): list and show any account's tasks,
 * resolve a `submission_unknown` one. Registered inside the admin scope, behind its token.
 */
export function registerAdminTasks(
  scope: FastifyInstance,
  deps: AppDeps,
  operator: OperatorActions,
): void {
  scope.get<{ Querystring: { status?: string; account_id?: string; kind?: string } }>(
    '/admin/v1/tasks',
    {
      schema: {
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            status: { type: 'string' },
            account_id: { type: 'string' },
            kind: { type: 'string' },
          },
        },
      },
    },
    async (request) =>
      deps.taskOperations.list({
        status: request.query.status,
        accountId: request.query.account_id,
        kind: request.query.kind,
      }),
  );
  scope.get<{ Params: { id: string } }>('/admin/v1/tasks/:id', async (request) =>
    deps.taskOperations.show(request.params.id),
  );
  scope.post<{ Params: { id: string }; Body: unknown }>(
    '/admin/v1/tasks/:id/resolve',
    { schema: { body: adminBodyOf(resolveTaskInput) } },
    async (request) =>
      operator.resolveTask(
        adminActor(request),
        request.params.id,
        parseInput(resolveTaskInput, request.body),
      ),
  );
}
