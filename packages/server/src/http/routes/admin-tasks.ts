import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { jsonSchemaOf, parseInput } from '../../errors/input-schema.js';
import type { OperatorActions } from '../../operator/operator-actions.js';
import { resolveTaskInput } from '../../operator/operator-inputs.js';
import type { AppDeps } from '../deps.js';
import { adminActor } from './admin-audit.js';
import { adminBodyOf } from './admin-bodies.js';

/** `GET /admin/v1/tasks` filters, each once, and no other (the kernel checks their values). */
const taskListQuery = z.strictObject({
  status: z.string().optional(),
  account_id: z.string().optional(),
  kind: z.string().optional(),
});
const taskListQuerySchema = jsonSchemaOf(taskListQuery);
type TaskListQueryString = z.output<typeof taskListQuery>;

/**
 * Operators' task routes under `/admin/v1` (docs/admin.md): list and show any account's tasks,
 * resolve a `submission_unknown` one. Registered inside the admin scope, behind its token.
 */
export function registerAdminTasks(
  scope: FastifyInstance,
  deps: AppDeps,
  operator: OperatorActions,
): void {
  scope.get<{ Querystring: TaskListQueryString }>(
    '/admin/v1/tasks',
    { schema: { querystring: taskListQuerySchema } },
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
