import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../deps.js';

/** A Stripe event is a few kilobytes; anything far larger is not one (413 before parsing). */
export const WEBHOOK_BODY_LIMIT_BYTES = 256 * 1024;

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
