import type { RedemptionBatchVoided } from '@tollgate/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { RedemptionBatches } from '../../accounts/redemption-batches.js';
import type { AppDeps } from '../deps.js';
import { jsonSchemaOf } from '../../errors/input-schema.js';
import { OperatorActions } from '../../operator/operator-actions.js';
import { parseUsageRange, usageQuerySchema } from '../../usage/account-usage.js';
import { OperatorDashboardReader } from '../../usage/operator-dashboard.js';
import {
  parseRequestLogQuery,
  readRequestLog,
  requestLogQuerySchema,
  type RequestLogQueryString,
} from '../../usage/operator-request-log.js';
import { operatorActorOf } from './operator-auth.js';

/** The code batches' page (each parameter once, no other: 400 naming it); the list judges them. */
const batchesQuery = z.strictObject({
  limit: z.string().optional(),
  after: z.string().max(100).optional(),
});
const batchesQuerySchema = jsonSchemaOf(batchesQuery);
type BatchesQueryString = z.output<typeof batchesQuery>;

/**
 * The operator's dashboard, request log and code batches (docs/console.md, "Dashboard",
 * "Request log", "Redemption codes"): `/console/api/admin/...` like every operator route (the
 * session, its CSRF token on the void, the operator role: a member is 403 before the query is
 * read). The void is an `OperatorActions` call, audited as the other operator actions.
 */
export function registerOperatorDashboardRoutes(scope: FastifyInstance, deps: AppDeps): void {
  const requireTotp = deps.config.server.console_require_operator_totp;
  const actorOf = (request: FastifyRequest) => operatorActorOf(request, requireTotp);
  /** The role first: a member learns nothing from these routes, not even a 400. */
  const operatorFirst = { preValidation: async (request: FastifyRequest) => void actorOf(request) };
  const operator = new OperatorActions(deps);
  const dashboard = new OperatorDashboardReader(deps.store.db, deps.config);
  const batches = new RedemptionBatches(deps.store.db, deps.clock);
  const admin = '/console/api/admin';

  scope.get<{ Querystring: { from?: string; to?: string } }>(
    `${admin}/dashboard`,
    { schema: { querystring: usageQuerySchema }, ...operatorFirst },
    async (request) => {
      const now = deps.clock.now();
      return dashboard.read(parseUsageRange(request.query, now), now);
    },
  );

  scope.get<{ Querystring: RequestLogQueryString }>(
    `${admin}/requests`,
    { schema: { querystring: requestLogQuerySchema }, ...operatorFirst },
    async (request) =>
      readRequestLog(
        deps.store.db,
        deps.requestListing,
        parseRequestLogQuery(request.query, deps.clock.now()),
      ),
  );

  scope.get<{ Querystring: BatchesQueryString }>(
    `${admin}/code-batches`,
    { schema: { querystring: batchesQuerySchema }, ...operatorFirst },
    async (request) => batches.list(request.query),
  );

  scope.post<{ Params: { id: string } }>(
    `${admin}/code-batches/:id/void`,
    async (request): Promise<RedemptionBatchVoided> => {
      const voided = await operator.voidRedemptionBatch(actorOf(request), request.params.id);
      return { batch: voided.batch, voided_now: voided.voided_now };
    },
  );
}
