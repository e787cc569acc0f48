import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AccountListing } from '../../accounts/account-listing.js';
import { OperatorActions } from '../../operator/operator-actions.js';
import { checkLedger } from '../../billing/ledger-check.js';
import { priceHistoryView } from '../../billing/price-view.js';
import { ApiError } from '../../errors/api-error.js';
import { jsonSchemaOf, oneFieldOf, parseInput, valuesOnly } from '../../errors/input-schema.js';
import {
  createAccountInput,
  createKeyInput,
  keyUpdateInput,
  redeemInput,
  redemptionBatchInput,
  redemptionCodeInput,
  resolveRequestInput,
  reviewUsageInput,
  rotateKeyInput,
  topUpInput,
} from '../../operator/operator-inputs.js';
import { operatorRecordView } from '../../requests/record-view.js';
import { unresolvedQueue } from '../../usage/unresolved-queue.js';
import { bearerTokenOrNothing } from '../plugins/admin-token.js';
import { answerRedemptionBatch } from '../redemption-batch-output.js';
import type { AppDeps } from '../deps.js';
import { adminActor, registerAdminAudit } from './admin-audit.js';
import { adminBodyOf } from './admin-bodies.js';
import { registerAdminChannels } from './admin-channels.js';
import { registerAdminBudgets } from './admin-budgets.js';
import { registerAdminTasks } from './admin-tasks.js';
import { registerAdminUsers } from './admin-users.js';
import { registerShareReview } from './shares.js';

/** A body as it came: each operator route parses it with its action's input schema. */
type Body = unknown;

/**
 * `GET /admin/v1/accounts` parameters, and no other: an unknown one (`?email=` for `?q=`) is a
 * 400 naming it, not an unfiltered list. The listing judges their values (accounts/account-listing.ts).
 */
const accountListQuery = z.strictObject({
  q: z.unknown().optional(),
  id_prefix: z.unknown().optional(),
  limit: z.unknown().optional(),
  after: z.unknown().optional(),
});
const accountListQuerySchema = jsonSchemaOf(accountListQuery);
type AccountListQueryString = z.output<typeof accountListQuery>;

/**
 * `GET /admin/v1/requests`: one queue at a time, the records flagged beyond the cap
 * (`?usage_exceeded_cap=unreviewed|all`) or those to resolve (`?status=submission_unknown`).
 */
const requestQueueQuery = oneFieldOf(
  z.xor([
    z.strictObject({ usage_exceeded_cap: valuesOnly(z.enum(['unreviewed', 'all'])) }),
    z.strictObject({ status: valuesOnly(z.enum(['submission_unknown'])) }),
  ]),
);
const requestQueueQuerySchema = jsonSchemaOf(requestQueueQuery);
type RequestQueueQueryString = z.output<typeof requestQueueQuery>;

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * The admin HTTP API under `/admin/v1` (docs/admin.md). Bearer `TOLLGATE_ADMIN_TOKEN`; when the
 * token is unset every admin route answers 404 as if it did not exist. API keys never open it.
 */
export function registerAdmin(scope: FastifyInstance, deps: AppDeps): void {
  const expected = deps.adminToken === undefined ? undefined : digest(deps.adminToken);
  scope.addHook('onRequest', async (request) => {
    if (expected === undefined)
      throw new ApiError(
        'NOT_FOUND',
        'the admin API is disabled (TOLLGATE_ADMIN_TOKEN is not set)',
      );
    const token = bearerTokenOrNothing(request.headers.authorization);
    if (token === undefined)
      throw new ApiError(
        'UNAUTHENTICATED',
        'the admin API needs Authorization: Bearer <TOLLGATE_ADMIN_TOKEN>',
      );
    if (!timingSafeEqual(digest(token), expected))
      throw new ApiError('PERMISSION_DENIED', 'this token may not use the admin API');
  });
  // Every action that changes something goes through here, audited (docs/audit.md).
  const operator = new OperatorActions(deps);

  scope.post<{ Body: Body }>(
    '/admin/v1/accounts',
    { schema: { body: adminBodyOf(createAccountInput) } },
    async (request, reply) => {
      void reply.code(201);
      return operator.createAccount(
        adminActor(request),
        parseInput(createAccountInput, request.body),
      );
    },
  );
  const accountListing = new AccountListing(deps.store.db, {
    clock: deps.clock,
    budgetTimeZone: deps.config.budget_time_zone,
  });
  scope.get<{ Querystring: AccountListQueryString }>(
    '/admin/v1/accounts',
    { schema: { querystring: accountListQuerySchema } },
    async (request) => accountListing.list(request.query),
  );
  scope.get<{ Params: { id: string } }>('/admin/v1/accounts/:id', async (request) =>
    deps.accounts.get(request.params.id),
  );
  scope.post<{ Params: { id: string }; Body: Body }>(
    '/admin/v1/accounts/:id/topups',
    { schema: { body: adminBodyOf(topUpInput) } },
    async (request, reply) => {
      const result = await operator.topUp(
        adminActor(request),
        request.params.id,
        parseInput(topUpInput, request.body),
      );
      if (result.replayed) void reply.header('idempotent-replayed', 'true');
      return result;
    },
  );
  scope.post<{ Params: { id: string }; Body: Body }>(
    '/admin/v1/accounts/:id/redemptions',
    { schema: { body: adminBodyOf(redeemInput) } },
    async (request) =>
      operator.redeem(
        adminActor(request),
        request.params.id,
        parseInput(redeemInput, request.body),
      ),
  );
  scope.post<{ Params: { id: string }; Body: Body }>(
    '/admin/v1/accounts/:id/keys',
    { schema: { body: adminBodyOf(createKeyInput) } },
    async (request, reply) => {
      void reply.code(201);
      return operator.createKey(
        adminActor(request),
        request.params.id,
        parseInput(createKeyInput, request.body),
      );
    },
  );
  scope.patch<{ Params: { id: string }; Body: Body }>(
    '/admin/v1/keys/:id',
    { schema: { body: adminBodyOf(keyUpdateInput) } },
    async (request) =>
      operator.setAllowedIps(
        adminActor(request),
        request.params.id,
        parseInput(keyUpdateInput, request.body),
      ),
  );
  scope.get<{ Params: { id: string } }>('/admin/v1/accounts/:id/keys', async (request) => ({
    object: 'list',
    data: await deps.keys.list(request.params.id),
  }));
  scope.post<{ Params: { id: string } }>('/admin/v1/keys/:id/disable', async (request) =>
    operator.disableKey(adminActor(request), request.params.id),
  );
  scope.post<{ Params: { id: string }; Body: Body }>(
    '/admin/v1/keys/:id/rotate',
    // The body may be absent (Fastify validates it as null): every field is optional.
    { schema: { body: adminBodyOf(rotateKeyInput, { absent: true }) } },
    async (request, reply) => {
      void reply.code(201);
      return operator.rotateKey(
        adminActor(request),
        request.params.id,
        parseInput(rotateKeyInput, request.body ?? {}),
      );
    },
  );

  scope.put<{ Params: { model: string }; Body: Body }>(
    '/admin/v1/models/:model/prices',
    // The price fields are many and the price book refuses unknown ones itself (CLI included).
    { schema: { body: { type: 'object' } } },
    async (request) => operator.setPrices(adminActor(request), request.params.model, request.body),
  );
  scope.get<{ Params: { model: string } }>('/admin/v1/models/:model/prices', async (request) =>
    priceHistoryView(await deps.prices.history(request.params.model)),
  );

  scope.post<{ Body: Body }>(
    '/admin/v1/redemption-codes/batches',
    { schema: { body: adminBodyOf(redemptionBatchInput) } },
    async (request, reply) =>
      answerRedemptionBatch(
        reply,
        request.headers.accept,
        await operator.createRedemptionCodes(
          adminActor(request),
          parseInput(redemptionBatchInput, request.body),
        ),
      ),
  );
  scope.post<{ Body: Body }>(
    '/admin/v1/redemption-codes',
    { schema: { body: adminBodyOf(redemptionCodeInput) } },
    async (request, reply) => {
      void reply.code(201);
      return operator.createRedemptionCode(
        adminActor(request),
        parseInput(redemptionCodeInput, request.body),
      );
    },
  );

  scope.get('/admin/v1/ledger/check', async () => checkLedger(deps.store.db));

  scope.get<{ Params: { id: string } }>('/admin/v1/requests/:id', async (request) => {
    const row = await deps.requests.records.byId(request.params.id);
    if (row === undefined) throw new ApiError('NOT_FOUND', 'no such request');
    return operatorRecordView(row);
  });
  scope.get<{ Querystring: RequestQueueQueryString }>(
    '/admin/v1/requests',
    { schema: { querystring: requestQueueQuerySchema } },
    async (request) => ({
      object: 'list',
      data:
        'status' in request.query
          ? await deps.settlements.awaitingResolution()
          : await deps.usageReviews.listFlagged({
              includeReviewed: request.query.usage_exceeded_cap === 'all',
            }),
    }),
  );
  scope.post<{ Params: { id: string }; Body: Body }>(
    '/admin/v1/requests/:id/review-usage',
    { schema: { body: adminBodyOf(reviewUsageInput) } },
    async (request) =>
      operator.reviewUsage(
        adminActor(request),
        request.params.id,
        parseInput(reviewUsageInput, request.body),
      ),
  );
  scope.post<{ Params: { id: string }; Body: Body }>(
    '/admin/v1/requests/:id/resolve',
    { schema: { body: adminBodyOf(resolveRequestInput) } },
    async (request) =>
      operator.resolveRequest(
        adminActor(request),
        request.params.id,
        parseInput(resolveRequestInput, request.body),
      ),
  );
  // The one queue of money held by outcomes never confirmed: records and tasks, with totals.
  scope.get('/admin/v1/unresolved', async () => unresolvedQueue(deps));
  registerAdminTasks(scope, deps, operator);
  registerAdminChannels(scope, deps, operator);
  registerAdminBudgets(scope, operator);
  registerShareReview(scope, deps, operator);
  registerAdminAudit(scope, deps, operator);
  registerAdminUsers(scope, deps, operator);
}
