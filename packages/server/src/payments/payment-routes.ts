import type { FastifyInstance, FastifyRequest } from 'fastify';
import { memberAccountOf } from '../console/console-auth.js';
import { operatorActorOf } from '../console/operator-auth.js';
import { bodyObject } from '../console/session-routes.js';
import type { AppDeps } from '../http/deps.js';

/** A Stripe event is a few kilobytes; anything far larger is not one (413 before parsing). */
export const WEBHOOK_BODY_LIMIT_BYTES = 256 * 1024;

type Query = Record<string, string | undefined>;

/**
 * The console's online top-up (docs/payments.md), in the console scope (session cookie and CSRF
 * token): a member opens a checkout and lists the account's orders; an operator lists every
 * account's orders, their refunds and flags.
 */
export function registerPaymentConsoleRoutes(scope: FastifyInstance, deps: AppDeps): void {
  scope.get<{ Querystring: Query }>('/console/api/topups', async (request) => ({
    ...(await deps.payments.listForAccount(memberAccountOf(request), request.query)),
    payments: deps.payments.status(),
  }));

  scope.post<{ Body: unknown }>('/console/api/topups', async (request, reply) => {
    const accountId = memberAccountOf(request);
    const started = await deps.payments.startTopUp(
      accountId,
      { amount: bodyObject(request.body)['amount'] },
      (orderId) => returnUrls(request, orderId),
    );
    void reply.code(201);
    return started;
  });

  scope.get<{ Querystring: Query }>('/console/api/admin/payment-orders', async (request) => {
    operatorActorOf(request, deps.config.server.console_require_operator_totp);
    return deps.payments.listAll(request.query);
  });
}

/**
 * The provider's webhook, in a scope of its own: no session, no CSRF token, no API key (the
 * signature is the authentication), and the body kept raw (the signature covers its exact
 * bytes), at most WEBHOOK_BODY_LIMIT_BYTES. Non-2xx unless the event was stored and applied (or
 * was a replay), so the provider delivers a failed one again.
 */
export async function registerPaymentWebhook(app: FastifyInstance, deps: AppDeps): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT_BYTES },
      (_request, body, done) => done(null, body),
    );
    scope.post<{ Body: Buffer | undefined }>(
      '/payments/stripe/webhook',
      { schema: { hide: true } },
      async (request) =>
        deps.payments.handleWebhook(request.body ?? Buffer.alloc(0), request.headers),
    );
  });
}

/** Back to the console's top-up page, on the address the member's browser used. */
function returnUrls(request: FastifyRequest, orderId: string) {
  const page = `${request.protocol}://${request.host}/console/topup?order=${orderId}`;
  return { successUrl: `${page}&result=paid`, cancelUrl: `${page}&result=cancelled` };
}
