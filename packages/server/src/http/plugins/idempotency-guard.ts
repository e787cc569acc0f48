import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestStore } from '../../requests/request-store.js';
import type { IdGenerator } from '../../util/effects.js';
import { isJudgedAtClaim, judgeIdempotencyKey } from '../idempotency-judgement.js';
import { principalOf } from './authenticate.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Whether a `POST` is a business POST whose `Idempotency-Key` is judged by the guard below
     * (default: yes). `false`: a read-only POST that records nothing (the quotes); a function:
     * decided per validated body (H3's one endpoint for quote and submit). Uploads say `false`
     * too: their fingerprint is the hash of bytes still to arrive, judged at their claim.
     */
    businessPost?: boolean | ((body: unknown) => boolean);
  }
}

/**
 * The idempotency fingerprint is judged before anything else about a business POST (docs/
 * requests.md): once authentication, rate limits and the body's schema have passed, and before
 * any rule of the route (model, price, digest, quote, task state, balance), a key that already
 * names another request of this API key — another body, or another path such as another task's
 * settle — is 409 `IDEMPOTENCY_CONFLICT`. The claim judges again inside its transaction (a
 * concurrent first use), with the same fingerprint (`requestFingerprint`). A missing or malformed
 * key is left to the route, which refuses it where it always did.
 *
 * A route made with `judgedAtClaim` (idempotency-judgement.ts) is not read here: see there.
 */
export function guardIdempotency(
  scope: FastifyInstance,
  records: RequestStore,
  ids: Pick<IdGenerator, 'uuid'>,
): void {
  scope.addHook('preHandler', async (request, reply) => {
    assignIdempotencyKey(request, reply, ids);
    if (!isBusinessPost(request)) return;
    if (isJudgedAtClaim(request)) return;
    await judgeIdempotencyKey(request, records);
  });
}

/**
 * A key created with `"idempotency": "optional"` (docs/keys.md, "Keys for tools that cannot send
 * an idempotency key") may send a POST without `Idempotency-Key`: the gateway assigns a new UUID,
 * which the route then reads as if the caller had sent it (the record, replays and conflicts are
 * the same), and answers it in the `Idempotency-Key` header so the caller can read the record
 * back or replay it. A key the caller sends is always the one used. A client's own request id
 * (`x-client-request-id`) is not taken instead: Codex CLI sends its conversation's id there, the
 * same on every request of a turn, so as a key it would replay the first answer.
 */
function assignIdempotencyKey(
  request: FastifyRequest,
  reply: FastifyReply,
  ids: Pick<IdGenerator, 'uuid'>,
): void {
  if (request.method !== 'POST' || request.headers['idempotency-key'] !== undefined) return;
  if (principalOf(request).idempotency !== 'optional') return;
  const assigned = ids.uuid();
  request.headers['idempotency-key'] = assigned;
  void reply.header('idempotency-key', assigned);
}

function isBusinessPost(request: FastifyRequest): boolean {
  if (request.method !== 'POST') return false;
  const marked = request.routeOptions.config.businessPost;
  if (marked === undefined) return true;
  return typeof marked === 'function' ? marked(request.body) : marked;
}
