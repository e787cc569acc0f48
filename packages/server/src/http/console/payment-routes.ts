import type { PaymentOrderList, StartedTopUp, TopUpList } from '@tollgate/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps } from '../deps.js';
import { memberAccountOf } from './console-auth.js';
import { withAccountEmails } from './console-names.js';
import { operatorActorOf } from './operator-auth.js';
import { bodyObject } from './session-routes.js';

type Query = Record<string, string | undefined>;

/**
 * The console's online top-up (docs/payments.md), in the console scope (session cookie and CSRF
 * token): a member opens a checkout and lists the account's orders; an operator lists every
 * account's orders, their refunds and flags.
 */
export function registerPaymentConsoleRoutes(scope: FastifyInstance, deps: AppDeps): void {
  scope.get<{ Querystring: Query }>('/console/api/topups', async (request): Promise<TopUpList> => ({
    ...(await deps.payments.listForAccount(memberAccountOf(request), request.query)),
    payments: deps.payments.status(),
  }));

  scope.post<{ Body: unknown }>(
    '/console/api/topups',
    async (request, reply): Promise<StartedTopUp> => {
      const accountId = memberAccountOf(request);
      const started = await deps.payments.startTopUp(
        accountId,
        { amount: bodyObject(request.body)['amount'] },
        (orderId) => returnUrls(request, orderId),
      );
      void reply.code(201);
      return started;
    },
  );

  scope.get<{ Querystring: Query }>(
    '/console/api/admin/payment-orders',
    async (request): Promise<PaymentOrderList> => {
      operatorActorOf(request, deps.config.server.console_require_operator_totp);
      const orders = await deps.payments.listAll(request.query);
      // Each order names its account by email (docs/console.md, "Names, not ids").
      return { ...orders, data: await withAccountEmails(deps.store.db, orders.data) };
    },
  );
}

/** Back to the console's top-up page, on the address the member's browser used. */
function returnUrls(request: FastifyRequest, orderId: string) {
  const page = `${request.protocol}://${request.host}/console/topup?order=${orderId}`;
  return { successUrl: `${page}&result=paid`, cancelUrl: `${page}&result=cancelled` };
}
