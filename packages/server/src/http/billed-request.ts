import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { outcomeNotRecorded } from '../errors/database-outage.js';
import { UpstreamFailure } from '../providers/upstream-error.js';
import { readIdempotencyKey } from '../requests/idempotency.js';
import { COUNTED_LOCALLY } from '../chat/token-estimate.js';
import { judgedByItsClaim, requestFingerprint } from './idempotency-judgement.js';
import type {
  Answer,
  Outcome,
  RecordedOutcome,
  RequestIdentity,
  Reserve,
} from '../requests/request-service.js';
import type { RoutedCall } from '../routing/channel-router.js';
import { replaySse } from './sse.js';
import { principalOf } from './plugins/authenticate.js';
import type { AppDeps } from './deps.js';
import { withFields } from '../util/with-fields.js';

export interface BilledOperation {
  /** The model id the record names, if any. */
  readonly model: string | null;
  /** The worst case to hold before any upstream call; `null` for operations that move no money. */
  readonly reserve: Reserve | null;
  /** Assets the request uses: they cannot be deleted until it is finished. */
  readonly assetIds?: readonly string[];
  /** The upstream work. Throws `UpstreamFailure` for upstream trouble. */
  execute(): Promise<Outcome>;
  /** The channels `execute` tried (routing/channel-router.ts), written on the record. */
  readonly routing?: RoutedCall;
}

/**
 * The life of one business POST: idempotency claim and hold (one transaction), the upstream
 * call outside any transaction, then outcome and money movement (one transaction), then the
 * answer. A replay answers from the record with `Idempotent-Replayed: true` and the original's
 * `X-Service-Request-Id`. A caller that disconnects does not stop the work: the record keeps
 * the outcome for it to read.
 */
export async function runBilledRequest(
  deps: Pick<AppDeps, 'requests' | 'metrics' | 'logger'>,
  request: FastifyRequest,
  reply: FastifyReply,
  operation: BilledOperation,
): Promise<unknown> {
  const claimed = await claimOrReplay(deps, request, reply, operation);
  if (claimed === undefined) return reply;
  const outcome = await executeSafely(operation, deps, request.id);
  const answer = await finishAndCount(deps, claimed, withTrail(outcome, operation.routing)).catch(
    (error: unknown) => {
      // The record exists (claimed): the answer points to it (errors/database-outage.ts).
      throw outcomeNotRecorded(error, request.id) ?? error;
    },
  );
  // The recorded text as is: what Fastify would send for `body` (JSON.stringify, no response
  // schema on these routes), without serialising it a second time.
  if (answer.json !== undefined)
    return reply.code(answer.status).type('application/json; charset=utf-8').send(answer.json);
  return reply.code(answer.status).send(answer.body);
}

export interface ClaimedRequest {
  readonly identity: RequestIdentity;
  readonly holdId: string | null;
}

/**
 * What the record of a business POST remembers of it: its key (required), the fingerprint of
 * method, path (with its values) and canonical body, the caller, and the model it names.
 */
export function requestIdentity(request: FastifyRequest, model: string | null): RequestIdentity {
  const route = request.routeOptions.url ?? request.url;
  return {
    requestId: request.id,
    principal: principalOf(request),
    idempotencyKey: readIdempotencyKey(request.headers),
    fingerprint: requestFingerprint(request),
    method: request.method,
    path: request.url.split('?')[0] ?? route,
    model,
  };
}

/**
 * Claims the idempotency key and takes the hold. Returns `undefined` when the request was
 * answered from its record (a replay); throws the refusal (409, 402) otherwise.
 */
export async function claimOrReplay(
  deps: Pick<AppDeps, 'requests' | 'metrics'>,
  request: FastifyRequest,
  reply: FastifyReply,
  operation: Pick<BilledOperation, 'model' | 'reserve' | 'assetIds'>,
): Promise<ClaimedRequest | undefined> {
  const identity = requestIdentity(request, operation.model);
  // The claim judges the key itself: a refusal after this point is not judged again.
  judgedByItsClaim(request);
  const claim = await deps.requests.claim(identity, operation.reserve, operation.assetIds);
  if (claim.kind === 'refused') {
    if (claim.error.code === 'INSUFFICIENT_FUNDS')
      deps.metrics.holds.inc({ outcome: 'insufficient_funds' });
    throw claim.error;
  }
  if (claim.kind === 'replay') {
    if (claim.transcript !== null) {
      replaySse(reply, claim.requestId, claim.transcript);
      return undefined;
    }
    void reply
      .code(claim.status)
      .header('idempotent-replayed', 'true')
      .header('x-service-request-id', claim.requestId)
      .send(claim.body);
    return undefined;
  }
  if (claim.holdId !== null) deps.metrics.holds.inc({ outcome: 'placed' });
  return { identity, holdId: claim.holdId };
}

/** Records the outcome with its money movement and counts the resolution. */
export async function finishAndCount(
  deps: Pick<AppDeps, 'requests' | 'metrics'>,
  claimed: ClaimedRequest,
  outcome: RecordedOutcome,
): Promise<Answer> {
  const answer = await deps.requests.finish(claimed.identity, claimed.holdId, outcome);
  if (claimed.holdId !== null) {
    const resolution =
      outcome.kind === 'succeeded'
        ? answer.status < 300
          ? 'captured'
          : 'awaiting_funds'
        : outcome.kind === 'failed'
          ? 'released'
          : 'submission_unknown';
    deps.metrics.resolutions.inc({ outcome: resolution });
    if (resolution === 'captured' && outcome.kind === 'succeeded')
      deps.metrics.captured.inc(outcome.amount);
  }
  if (outcome.kind === 'succeeded' && outcome.usageFlag !== undefined) {
    if (outcome.usageFlag.startsWith(COUNTED_LOCALLY)) deps.metrics.usageCountedLocally.inc();
    else deps.metrics.usageExceededCap.inc();
  }
  return answer;
}

/** The outcome with the channels tried, when the operation was routed. */
export function withTrail(
  outcome: RecordedOutcome,
  routing: RoutedCall | undefined,
): RecordedOutcome {
  if (routing === undefined) return outcome;
  return withFields(outcome, {
    routing: { channel: routing.servedBy, attempts: routing.attempts },
  });
}

export async function executeSafely(
  operation: Pick<BilledOperation, 'execute'>,
  deps: Pick<AppDeps, 'logger'>,
  requestId: string,
): Promise<Outcome> {
  try {
    return await operation.execute();
  } catch (error) {
    return failureOutcome(error, deps, requestId);
  }
}

/**
 * The outcome of an operation that threw: an upstream failure keeps its certainty; any other
 * fault of ours after the hold is `unknown` (we cannot know whether the upstream did the work),
 * so the hold is kept and the record says so.
 */
export function failureOutcome(
  error: unknown,
  deps: Pick<AppDeps, 'logger'>,
  requestId: string,
): Outcome {
  if (error instanceof UpstreamFailure) {
    deps.logger.warn(
      { requestId, certainty: error.certainty, detail: error.detail },
      'upstream call did not succeed',
    );
    return {
      kind: error.certainty,
      error: error.apiError,
      upstreamRequestId: error.upstreamRequestId,
    };
  }
  deps.logger.error({ requestId, err: error }, 'operation failed unexpectedly');
  return {
    kind: 'unknown',
    error: new ApiError(
      'INTERNAL_ERROR',
      'internal error; the outcome is unknown: read the original request',
    ),
    upstreamRequestId: null,
  };
}
