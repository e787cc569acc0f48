import type {
  FastifyInstance,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteHandlerMethod,
  RouteShorthandOptions,
  RouteShorthandOptionsWithHandler,
} from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { fingerprint, pathWithValues, readIdempotencyKey } from '../requests/idempotency.js';
import { idempotencyConflict } from '../requests/request-errors.js';
import type { RequestStore } from '../requests/request-store.js';
import { principalOf } from './plugins/authenticate.js';

/**
 * Judging a business POST's `Idempotency-Key` against the records of its API key: the one
 * fingerprint the judgement and the claim compare, and where the judgement is made (by the
 * guard, plugins/idempotency-guard.ts, before the route's rules; or, for the routes made with
 * `judgedAtClaim`, by their claim).
 */

/** Computed once per request: the idempotency guard and the claim judge the same value. */
const fingerprints = new WeakMap<FastifyRequest, string>();

/**
 * The idempotency fingerprint of a business POST (requests/idempotency.ts): method, the route
 * with its parameters' values, canonical body. The one definition both the early judgement
 * (plugins/idempotency-guard.ts) and the claim use.
 */
export function requestFingerprint(request: FastifyRequest): string {
  const known = fingerprints.get(request);
  if (known !== undefined) return known;
  const route = request.routeOptions.url ?? request.url.split('?')[0] ?? request.url;
  const computed = fingerprint(request.method, pathWithValues(route, request.params), request.body);
  fingerprints.set(request, computed);
  return computed;
}

/** Requests whose key is judged already (by the guard, or by their claim): never read twice. */
const judged = new WeakSet<FastifyRequest>();

/**
 * Refuses with 409 `IDEMPOTENCY_CONFLICT` when the request's key already names a request of its
 * API key with another fingerprint. Once per request: a second call does nothing.
 */
export async function judgeIdempotencyKey(
  request: FastifyRequest,
  records: RequestStore,
): Promise<void> {
  if (judged.has(request)) return;
  judged.add(request);
  let idempotencyKey: string;
  try {
    idempotencyKey = readIdempotencyKey(request.headers);
  } catch {
    return;
  }
  const existing = await records.fingerprintOf(principalOf(request).keyId, idempotencyKey);
  if (existing !== undefined && existing.fingerprint !== requestFingerprint(request))
    throw idempotencyConflict(existing.id);
}

/** Said by the claim (billed-request.ts), which judges the key in its own statement. */
export function judgedByItsClaim(request: FastifyRequest): void {
  judged.add(request);
}

/**
 * A business route whose claim judges the key and which, before its claim, only reads and
 * refuses (the billed text routes: chat, embeddings, rerank). The guard's read is then one round
 * trip that every accepted request pays for nothing: the claim finds a used key anyway (its
 * insert meets the unique index) and answers it exactly as the guard would have, a replay or
 * 409. So the read is made only where the answer could differ from the guard's order:
 *
 * - when the route refuses before its claim (an unknown model, a body over the model's limits),
 *   the key is judged first, and a used key's 409 replaces the route's refusal, as if the guard
 *   had run before the rule;
 * - before anything the route does that is not a read (a conversation turn, fetching an image
 *   URL), the route calls `judgeIdempotencyKey` itself.
 *
 * A failed read leaves the route's own refusal as the answer: nothing was done either way.
 */
export function judgedAtClaim<Route extends RouteGenericInterface>(
  records: RequestStore,
  options: Pick<RouteShorthandOptions, 'schema'>,
  handler: Handler<Route>,
): RouteShorthandOptionsWithHandler<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  Route
> {
  const judgedHandler = async function (
    this: FastifyInstance,
    request: Parameters<Handler<Route>>[0],
    reply: Parameters<Handler<Route>>[1],
  ): Promise<unknown> {
    try {
      const answer: unknown = handler.call(this, request, reply);
      return await answer;
    } catch (refusal) {
      await judgeIdempotencyKey(request, records).catch((judgement: unknown) => {
        if (judgement instanceof ApiError) throw judgement;
      });
      throw refusal;
    }
  };
  // The same handler's answer, awaited: TypeScript cannot resolve Fastify's reply type of an
  // open route generic to see that a promise of it is still one.
  return {
    ...options,
    config: { judgedAtClaim: true },
    handler: judgedHandler as unknown as Handler<Route>,
  };
}

type Handler<Route extends RouteGenericInterface> = RouteHandlerMethod<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  Route
>;

/** Whether the request's route is made with `judgedAtClaim`: the guard leaves it to the claim. */
export function isJudgedAtClaim(request: FastifyRequest): boolean {
  return request.routeOptions.config.judgedAtClaim === true;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set by `judgedAtClaim` only: a route's options made with it, never written by hand. */
    judgedAtClaim?: boolean;
  }
}
