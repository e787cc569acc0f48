import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { completeDocument } from './openapi/document.js';
import { registerRouteCatalog } from './openapi/route-catalog.js';
import { guardConnections, serverOptions } from './connection-guard.js';
import type { AppDeps } from './deps.js';
import { requireApiKey } from './plugins/authenticate.js';
import { logsAt } from '../logger.js';
import { requestLoggerFactory } from './request-logger.js';
import { registerClientAddress } from '../auth/client-address.js';
import { AdminTokenThrottle, guardAdminToken } from './plugins/admin-token.js';
import {
  answerClientError,
  answerFrameworkError,
  registerErrorHandling,
} from './plugins/error-handler.js';
import { guardIdempotency } from './plugins/idempotency-guard.js';
import { registerJsonBody } from './plugins/json-body.js';
import { RateLimits } from './plugins/rate-limit.js';
import { pathOnly, registerRequestHygiene } from './plugins/request-hygiene.js';
import { registerAdmin } from './routes/admin.js';
import { registerAdminStatements } from './routes/admin-statements.js';
import { registerAssets } from './routes/assets.js';
import { registerChat } from './routes/chat.js';
import { registerMessages } from './routes/messages.js';
import { registerResponses } from './routes/responses.js';
import { registerEmbeddings } from './routes/embeddings.js';
import { registerModels } from './routes/models.js';
import { registerOperations } from './routes/operations.js';
import { registerRequests } from './routes/requests.js';
import { registerRerank } from './routes/rerank.js';
import { registerPublicShares, registerShares } from './routes/shares.js';
import { registerH3 } from './routes/h3.js';
import { registerTasks } from './routes/tasks.js';
import { registerUsage } from './routes/usage.js';
import { registerConsole } from './console/register-console.js';
import { registerPaymentWebhook } from './routes/payment-webhook.js';

declare module 'fastify' {
  interface FastifyRequest {
    releaseRateLimit: (() => void) | undefined;
  }
}

/**
 * Builds the HTTP app; never listens (main.ts does, tests use `inject` or listen on port 0).
 * Order: hygiene and errors, then the OpenAPI generator, then the scopes: operations (no
 * auth), `/v1` (API key, rate limits), `/admin/v1` (admin token), `/console` (console session).
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    // One line per request is written in onResponse (path only, no query string or headers).
    logController: new LogController({ disableRequestLogging: true }),
    // `request.log` is made when it first writes (request-logger.ts).
    childLoggerFactory: requestLoggerFactory,
    genReqId: () => deps.ids.next('req'),
    bodyLimit: deps.config.limits.body_bytes,
    ajv: {
      customOptions: {
        removeAdditional: false,
        coerceTypes: false,
        useDefaults: false,
        allErrors: false,
      },
    },
    routerOptions: { ignoreTrailingSlash: true },
    // Refusals that happen before any hook (a bad URL; bytes that never became a request) in
    // our error shape too.
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError(deps.ids, deps.logger),
    ...serverOptions(deps.config.server),
  });
  guardConnections(app.server, deps.config.server);
  registerClientAddress(app, deps.config.server.trusted_proxies);
  registerRouteCatalog(app);
  registerRequestHygiene(app);
  registerErrorHandling(app);
  registerJsonBody(app);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Tollgate',
        version: '0.1.0',
        description: 'Paid API gateway to AI models. Amounts are integer micro-yuan (CNY_MICRO).',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    // The route schemas give the requests; the protocol's types give the answers (docs/openapi.md).
    transformObject: (documentObject) =>
      completeDocument('openapiObject' in documentObject ? documentObject.openapiObject : {}),
  });

  // The per-request hooks below are synchronous, callback style: an async hook costs a promise
  // and a microtask turn per request for nothing (bench/RESULTS.md, "Outside the store").
  const modelIds = new Set(deps.catalog.models.map((model) => model.id));
  app.addHook('onResponse', (request, reply, done) => {
    request.releaseRateLimit?.();
    const route = request.routeOptions.url ?? 'unmatched';
    const model = modelLabel(modelIds, request.body);
    deps.metrics.requests.inc({ route, model, status: String(reply.statusCode) });
    deps.metrics.latency.observe({ route, model }, reply.elapsedTime / 1000);
    // The access line's path is redacted (log-redaction.ts): worth doing only if it is written.
    if (logsAt(request.log, 'info'))
      request.log.info(
        {
          method: request.method,
          path: pathOnly(request),
          client: request.clientAddress,
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 100) / 100,
        },
        'request',
      );
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    request.releaseRateLimit?.();
    done();
  });
  // An answer given before the body arrived (401, 413, 415, 429) closes the connection: the rest
  // of the body would otherwise keep trickling in for as long as the client likes. A draining
  // instance closes each connection after its answer, so the client's next request goes elsewhere.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete || deps.readiness.draining) void reply.header('connection', 'close');
    done(null, payload);
  });

  // A stream whose caller went away is still read and recorded (http/streamed-chat.ts): the app
  // is closed, and the database after it, only once none is left.
  app.addHook('onClose', () => deps.streamsInFlight.drained());

  registerOperations(app, deps);
  // Public shares: no API key, outside /v1 (docs/shares.md).
  registerPublicShares(app, deps);
  const limits = new RateLimits(
    {
      requestsPerMinute: deps.config.limits.requests_per_minute,
      concurrentRequests: deps.config.limits.concurrent_requests,
      concurrentRequestsPerAccount: deps.config.limits.concurrent_requests_per_account,
      concurrencyLeaseMs: deps.config.limits.concurrency_lease_ms,
    },
    deps.redis,
    warnEvery(10_000, deps.clock, (error) =>
      deps.logger.warn(
        { err: error },
        'Redis unreachable: rate limits count on this instance alone until it answers (money is not affected)',
      ),
    ),
  );
  await app.register(async (v1) => {
    v1.decorateRequest('releaseRateLimit', undefined);
    // The rate limits run in the API key's hook, once the key is known (one hook, not two).
    requireApiKey(v1, deps.keys, async (request, principal) => {
      request.releaseRateLimit = await limits.acquire(principal);
    });
    guardIdempotency(v1, deps.requests.records, deps.ids);
    registerModels(v1, deps);
    registerChat(v1, deps);
    registerMessages(v1, deps);
    registerResponses(v1, deps);
    registerEmbeddings(v1, deps);
    registerRerank(v1, deps);
    registerRequests(v1, deps);
    registerAssets(v1, deps, deps.assets);
    registerTasks(v1, deps);
    registerH3(v1, deps);
    registerShares(v1, deps);
    registerUsage(v1, deps);
  });
  await app.register(async (admin) => {
    guardAdminToken(admin, deps.adminToken, new AdminTokenThrottle(deps.redis));
    registerAdmin(admin, deps);
    registerAdminStatements(admin, deps);
  });
  // The web console: session cookie and CSRF token, never an API key (docs/console.md).
  await registerConsole(app, deps);
  // The payment provider's webhook: its signature, not a session or a key (docs/payments.md).
  await registerPaymentWebhook(app, deps);
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.ready();
  return app;
}

/** Only configured model ids become metric labels, so callers cannot blow up cardinality. */
function modelLabel(modelIds: ReadonlySet<string>, body: unknown): string {
  const model = (body as { model?: unknown } | undefined)?.model;
  return typeof model === 'string' && modelIds.has(model) ? model : '';
}

/** `warn`, called at most once per `intervalMs`: a Redis outage must not write a line per request. */
function warnEvery(
  intervalMs: number,
  clock: AppDeps['clock'],
  warn: (error: unknown) => void,
): (error: unknown) => void {
  let last = Number.NEGATIVE_INFINITY;
  return (error) => {
    const now = clock.now();
    if (now - last < intervalMs) return;
    last = now;
    warn(error);
  };
}
