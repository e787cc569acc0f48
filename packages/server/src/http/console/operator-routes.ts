import type {
  AccountPage,
  ApiKeyList,
  AuditEventPage,
  ChannelList,
  ConsoleUserList,
  ConsoleUserPage,
  LedgerReport,
  ModelPriceHistory,
  NamedOperatorRecordList,
  NamedOperatorTaskList,
  ReviewShareList,
  UnresolvedQueue,
} from '@tollgate/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AccountListing } from '../../accounts/account-listing.js';
import { OperatorActions } from '../../operator/operator-actions.js';
import { checkLedger } from '../../billing/ledger-check.js';
import { modelPricesView, priceHistoryView } from '../../billing/price-view.js';
import { ApiError } from '../../errors/api-error.js';
import { parseInput } from '../../errors/input-schema.js';
import type { AppDeps } from '../deps.js';
import { answerRedemptionBatch } from '../redemption-batch-output.js';
import { answerStatement, statementRouteOptions } from '../routes/admin-statements.js';
import { serveContent } from '../serve-content.js';
import {
  budgetInput,
  channelSwitchInput,
  createAccountInput,
  invitationInput,
  keyUpdateInput,
  redemptionBatchInput,
  redemptionCodeInput,
  resolveRequestInput,
  resolveTaskInput,
  reviewUsageInput,
  shareDecisionInput,
  topUpInput,
} from '../../operator/operator-inputs.js';
import { unresolvedQueue } from '../../usage/unresolved-queue.js';
import type { StatementQueryString } from '../../usage/statement.js';
import { shareServiceOf } from '../../shares/share-service.js';
import { withAccountEmails, withKeyNames, withTaskNames } from './console-names.js';
import { operatorActorOf as actorOf } from './operator-auth.js';
import { bodyObject } from './session-routes.js';

type Query = Record<string, string | undefined>;
type WithId = { Params: { id: string }; Body: unknown };

/**
 * The operator's pages (docs/console.md, "Operator pages"): `/console/api/admin/...`, behind the
 * console session and its CSRF token (console-auth.ts) and the operator role (403 for a member,
 * before anything is read). Every action is an `OperatorActions` call, the same the admin API
 * makes, so it runs the same service and writes the same audit row, naming the operator.
 */
export function registerOperatorRoutes(scope: FastifyInstance, deps: AppDeps): void {
  const operator = new OperatorActions(deps);
  const requireTotp = deps.config.server.console_require_operator_totp;
  const operatorActorOf = (request: FastifyRequest) => actorOf(request, requireTotp);
  const accountListing = new AccountListing(deps.store.db, {
    clock: deps.clock,
    budgetTimeZone: deps.config.budget_time_zone,
  });
  const shares = shareServiceOf(deps);
  /** Rows of the console's answers with their account's email and their key's name. */
  const named = async <Row extends { account_id: string; key_id: string }>(rows: Row[]) =>
    withKeyNames(deps.store.db, await withAccountEmails(deps.store.db, rows));
  /** A read opens to operators only; the actor is not needed. */
  const read = (request: FastifyRequest): void => void operatorActorOf(request);
  const admin = '/console/api/admin';

  scope.get<{ Querystring: Query }>(`${admin}/accounts`, async (request): Promise<AccountPage> => {
    read(request);
    return accountListing.list(request.query);
  });
  scope.post<{ Body: unknown }>(`${admin}/accounts`, async (request, reply) => {
    const actor = operatorActorOf(request);
    void reply.code(201);
    return operator.createAccount(actor, parseInput(createAccountInput, request.body));
  });
  scope.get<WithId>(`${admin}/accounts/:id`, async (request) => {
    read(request);
    return deps.accounts.get(request.params.id);
  });
  scope.post<WithId>(`${admin}/accounts/:id/topups`, async (request) =>
    operator.topUp(
      operatorActorOf(request),
      request.params.id,
      parseInput(topUpInput, request.body),
    ),
  );
  scope.get<WithId>(`${admin}/accounts/:id/keys`, async (request): Promise<ApiKeyList> => {
    read(request);
    return { object: 'list', data: await deps.keys.list(request.params.id) };
  });
  // The same statement as `GET /admin/v1/accounts/{id}/statement` (JSON, or CSV to download).
  scope.get<{ Params: { id: string }; Querystring: StatementQueryString }>(
    `${admin}/accounts/:id/statement`,
    // The role is checked before the query is validated: a member learns nothing, not even a 400.
    { ...statementRouteOptions, preValidation: async (request) => read(request) },
    async (request, reply) => answerStatement(deps, request, reply, request.params.id),
  );
  scope.get<WithId>(`${admin}/accounts/:id/members`, async (request): Promise<ConsoleUserList> => {
    read(request);
    return { object: 'list', data: await deps.consoleUsers.membersOf(request.params.id) };
  });
  scope.post<WithId>(`${admin}/keys/:id/disable`, async (request) =>
    operator.disableKey(operatorActorOf(request), request.params.id),
  );
  scope.patch<WithId>(`${admin}/keys/:id`, async (request) =>
    operator.setAllowedIps(
      operatorActorOf(request),
      request.params.id,
      parseInput(keyUpdateInput, request.body),
    ),
  );
  scope.put<WithId>(`${admin}/keys/:id/budget`, async (request) =>
    operator.setKeyBudget(
      operatorActorOf(request),
      request.params.id,
      parseInput(budgetInput, request.body),
    ),
  );
  scope.delete<WithId>(`${admin}/keys/:id/budget`, async (request) =>
    operator.removeKeyBudget(operatorActorOf(request), request.params.id),
  );
  scope.put<WithId>(`${admin}/accounts/:id/budget`, async (request) =>
    operator.setAccountBudget(
      operatorActorOf(request),
      request.params.id,
      parseInput(budgetInput, request.body),
    ),
  );
  scope.delete<WithId>(`${admin}/accounts/:id/budget`, async (request) =>
    operator.removeAccountBudget(operatorActorOf(request), request.params.id),
  );

  scope.get(`${admin}/channels`, async (request): Promise<ChannelList> => {
    read(request);
    return { object: 'list', data: await deps.channels.list() };
  });
  for (const action of ['disable', 'enable'] as const)
    scope.post<WithId>(`${admin}/channels/:id/${action}`, async (request) =>
      operator.setChannelDisabled(
        operatorActorOf(request),
        request.params.id,
        action === 'disable',
        parseInput(channelSwitchInput, request.body ?? {}),
      ),
    );

  scope.post<{ Body: unknown }>(`${admin}/redemption-codes`, async (request, reply) => {
    const actor = operatorActorOf(request);
    void reply.code(201);
    return operator.createRedemptionCode(actor, parseInput(redemptionCodeInput, request.body));
  });
  scope.post<{ Body: unknown }>(`${admin}/redemption-codes/batches`, async (request, reply) => {
    const actor = operatorActorOf(request);
    const codes = await operator.createRedemptionCodes(
      actor,
      parseInput(redemptionBatchInput, request.body),
    );
    return answerRedemptionBatch(reply, request.headers.accept, codes);
  });
  scope.post<{ Body: unknown }>(`${admin}/invitations`, async (request, reply) => {
    const actor = operatorActorOf(request);
    void reply.code(201);
    return operator.invite(actor, parseInput(invitationInput, request.body));
  });

  // Console users (docs/console.md, "Taking access away"): an operator may not disable
  // themselves here, nor the last operator who can sign in.
  scope.get<{ Querystring: Query }>(`${admin}/users`, async (request): Promise<ConsoleUserPage> => {
    read(request);
    return deps.consoleUsers.list(request.query);
  });
  for (const action of ['disable', 'enable'] as const)
    scope.post<WithId>(`${admin}/users/:id/${action}`, async (request) => {
      const actor = operatorActorOf(request);
      return operator.setUserDisabled(actor, request.params.id, action === 'disable', {
        ...(actor.id === undefined ? {} : { actingUserId: actor.id }),
      });
    });

  // The review card names the account by its email, the key by its name and the task by its
  // kind and model (docs/console.md, "Names, not ids").
  scope.get<{ Querystring: Query }>(
    `${admin}/shares`,
    async (request): Promise<ReviewShareList> => {
      read(request);
      const page = await shares.listForReview(request.query);
      return { ...page, data: await withTaskNames(deps.store.db, await named(page.data)) };
    },
  );
  // The preview of the content under review: the session opens it (an <img> sends the cookie).
  scope.get<{ Params: { id: string } }>(
    `${admin}/shares/:id/content`,
    async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
      read(request);
      const object = await shares.reviewContent(request.params.id);
      void reply.header('referrer-policy', 'no-referrer');
      return serveContent(request, reply, deps.assets, object, 'private, no-store');
    },
  );
  for (const decision of ['approve', 'reject'] as const)
    scope.post<WithId>(`${admin}/shares/:id/${decision}`, async (request) =>
      operator.decideShare(
        operatorActorOf(request),
        request.params.id,
        decision,
        parseInput(shareDecisionInput, request.body ?? {}),
      ),
    );

  scope.get(`${admin}/unresolved`, async (request): Promise<UnresolvedQueue> => {
    read(request);
    return unresolvedQueue(deps);
  });
  scope.get(`${admin}/requests/unresolved`, async (request): Promise<NamedOperatorRecordList> => {
    read(request);
    return { object: 'list', data: await named(await deps.settlements.awaitingResolution()) };
  });
  scope.get(
    `${admin}/requests/usage-beyond-cap`,
    async (request): Promise<NamedOperatorRecordList> => {
      read(request);
      return {
        object: 'list',
        data: await named(await deps.usageReviews.listFlagged({ includeReviewed: false })),
      };
    },
  );
  scope.post<WithId>(`${admin}/requests/:id/resolve`, async (request) =>
    operator.resolveRequest(
      operatorActorOf(request),
      request.params.id,
      parseInput(resolveRequestInput, request.body),
    ),
  );
  scope.post<WithId>(`${admin}/requests/:id/review-usage`, async (request) =>
    operator.reviewUsage(
      operatorActorOf(request),
      request.params.id,
      parseInput(reviewUsageInput, request.body),
    ),
  );
  scope.get<{ Querystring: Query }>(
    `${admin}/tasks`,
    async (request): Promise<NamedOperatorTaskList> => {
      read(request);
      const list = await deps.taskOperations.list({
        status: request.query['status'] ?? 'submission_unknown',
      });
      return { ...list, data: await named(list.data) };
    },
  );
  scope.post<WithId>(`${admin}/tasks/:id/resolve`, async (request) =>
    operator.resolveTask(
      operatorActorOf(request),
      request.params.id,
      parseInput(resolveTaskInput, request.body),
    ),
  );

  scope.get(`${admin}/ledger/check`, async (request): Promise<LedgerReport> => {
    read(request);
    return checkLedger(deps.store.db);
  });
  scope.get<{ Querystring: Query }>(`${admin}/audit`, async (request): Promise<AuditEventPage> => {
    read(request);
    return deps.audit.list(request.query);
  });

  scope.get(`${admin}/models`, async (request) => {
    read(request);
    const data = await Promise.all(
      deps.config.models.map(async (model) => ({
        id: model.id,
        upstream: model.upstream,
        families: model.families,
        current: modelPricesView(await deps.prices.currentFor(model.id)),
      })),
    );
    return { object: 'list', data };
  });
  scope.get<{ Params: { model: string } }>(
    `${admin}/models/:model/prices`,
    async (request): Promise<ModelPriceHistory> => {
      read(request);
      return priceHistoryView(await deps.prices.history(request.params.model));
    },
  );
  scope.put<{ Params: { model: string }; Body: unknown }>(
    `${admin}/models/:model/prices`,
    async (request) => {
      const actor = operatorActorOf(request);
      return operator.setPrices(actor, request.params.model, bodyObject(request.body));
    },
  );
  scope.all(`${admin}/*`, async (request) => {
    read(request);
    throw new ApiError('NOT_FOUND', 'no such operator route');
  });
}
