import type { OwnerTask, OwnerTaskList } from '@tollgate/protocol';
import { H3_SETTLE_CONFIRMATION, SETTLE_CONFIRMATION } from '@tollgate/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ownDeliveredAsset } from '../../assets/asset-uses.js';
import { ApiError } from '../../errors/api-error.js';
import { jsonSchemaOf } from '../../errors/input-schema.js';
import { answerClaim } from '../claim-answer.js';
import { serveContent } from '../serve-content.js';
import { refuseQueryString, SETTLE_BODY_LIMIT } from '../settle-rules.js';
import { recordNotFound } from '../../requests/request-errors.js';
import { AccountTasks, ownerTaskView } from './account-tasks.js';
import { settleBodyFor } from '../../tasks/task-settlement.js';
import { memberAccountOf } from './console-auth.js';
import type { ConsoleDeps } from './console-deps.js';
import { withKeyNames } from './console-names.js';
import { actingAsCreator } from './owner-identity.js';

/** Either family's settle body (spec 4.3, 4.5); the route then holds it to the task's own word. */
const anySettleBody = z.xor([
  settleBodyFor(SETTLE_CONFIRMATION),
  settleBodyFor(H3_SETTLE_CONFIRMATION),
]);
const anySettleBodySchema = jsonSchemaOf(anySettleBody);
type AnySettleBody = z.output<typeof anySettleBody>;

/** The list's filters, each once, and no other (400 naming it); the list judges their values. */
const taskQuery = z.strictObject({
  kind: z.string().optional(),
  status: z.string().optional(),
  billing_state: z.string().optional(),
});
const taskQuerySchema = jsonSchemaOf(taskQuery);
type TaskQueryString = z.output<typeof taskQuery>;

/**
 * The owner's tasks, settles and delivered files (docs/console.md): every key's tasks of the
 * member's account, settled with the spec's exact body through the same `TaskSettlement` `/v1`
 * uses, records awaiting funds settled through the same `SettlementService`, and delivered
 * assets served as `/v1/assets/{id}/content` serves them.
 */
export function registerCallerTaskRoutes(scope: FastifyInstance, deps: ConsoleDeps): void {
  const tasks = new AccountTasks(deps.store.db, deps.taskFamilies);

  scope.get<{ Querystring: TaskQueryString }>(
    '/console/api/tasks',
    { schema: { querystring: taskQuerySchema } },
    async (request): Promise<OwnerTaskList> => {
      const list = await tasks.list(memberAccountOf(request), {
        kind: request.query.kind,
        status: request.query.status,
        billingState: request.query.billing_state,
      });
      // Each task names its key (docs/console.md, "Names, not ids").
      return { ...list, data: await withKeyNames(deps.store.db, list.data) };
    },
  );

  scope.get<{ Params: { id: string } }>('/console/api/tasks/:id', async (request) => {
    const task = await tasks.get(memberAccountOf(request), request.params.id);
    const [named]: (OwnerTask | undefined)[] = await withKeyNames(deps.store.db, [
      ownerTaskView(deps.taskFamilies, task),
    ]);
    return named;
  });

  scope.post<{ Params: { id: string }; Body: AnySettleBody }>(
    '/console/api/tasks/:id/settle',
    { bodyLimit: SETTLE_BODY_LIMIT, schema: { body: anySettleBodySchema } },
    async (request, reply) => {
      refuseQueryString(request);
      const task = await tasks.get(memberAccountOf(request), request.params.id);
      const word = task.kind === 'h3' ? H3_SETTLE_CONFIRMATION : SETTLE_CONFIRMATION;
      if (request.body.confirmation !== word)
        throw new ApiError(
          'INVALID_INPUT',
          `confirmation must be ${word} for this task`,
          'confirmation',
        );
      const identity = await actingAsCreator(deps.store.db, request, task.key_id);
      return answerClaim(
        reply,
        await deps.taskSettlement.settle(identity, { kind: task.kind, id: task.id }, request.body),
      );
    },
  );

  scope.post<{ Params: { id: string } }>(
    '/console/api/requests/:id/settle',
    async (request, reply) => {
      refuseQueryString(request);
      if (request.body !== undefined && request.body !== null)
        throw new ApiError(
          'INVALID_INPUT',
          'settle takes an empty body: it settles the original request as it was',
          'body',
        );
      const accountId = memberAccountOf(request);
      // By id as every exact read (pending events included: requests/request-store.ts).
      const record = await deps.requests.records.byId(request.params.id);
      if (record === undefined || record.account_id !== accountId) throw recordNotFound();
      const identity = await actingAsCreator(deps.store.db, request, record.key_id);
      return answerClaim(reply, await deps.settlements.settle(identity, request.params.id));
    },
  );

  const content = async (
    request: FastifyRequest<{ Params: { id: string } }>,
    reply: FastifyReply,
  ) => {
    const accountId = memberAccountOf(request);
    const asset = await ownDeliveredAsset(deps.store.db, accountId, request.params.id);
    return serveContent(request, reply, deps.assets, asset);
  };
  scope.get<{ Params: { id: string } }>(
    '/console/api/assets/:id/content',
    { exposeHeadRoute: false },
    content,
  );
  scope.head<{ Params: { id: string } }>('/console/api/assets/:id/content', content);
}
