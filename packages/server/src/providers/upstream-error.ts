import { ApiError, invalidInput } from '../errors/api-error.js';

/**
 * How an upstream call failed, from the money's point of view:
 *  - `failed`: the upstream certainly did not do (or bill) the work: nothing was sent, or it
 *    answered with an error status. The hold is released.
 *  - `unknown`: the request may have been done: a timeout after sending, a dropped connection,
 *    a 200 whose body we cannot verify or price. The hold is kept (submission_unknown).
 * The caller-facing error never carries the upstream's raw body.
 */
export class UpstreamFailure extends Error {
  override readonly name = 'UpstreamFailure';
  constructor(
    readonly certainty: 'failed' | 'unknown',
    readonly apiError: ApiError,
    readonly upstreamRequestId: string | null,
    readonly detail: string,
    /** The upstream's HTTP status when it answered with an error status (null otherwise). */
    readonly upstreamStatus: number | null = null,
    /**
     * `gateway`: it failed on this side before anything was sent (the caller left, or no
     * connection of this instance's pool came free in time): it says nothing of the upstream's
     * health, so no channel's circuit breaker counts it (routing/channel-router.ts).
     */
    readonly origin: 'upstream' | 'gateway' = 'upstream',
    /**
     * What the upstream's error answer said, when its adapter recognised it (context-length.ts):
     * `context_length`, the caller's input does not fit the model's context window. A refusal
     * of the request itself, not a fault of the channel: never moved to another channel, never
     * counted against the channel's health (routing/failover-rule.ts).
     */
    readonly refusal: UpstreamRefusal | null = null,
  ) {
    super(`${certainty}: ${detail}`);
  }

  /** The same failure, answered to the caller with `apiError` (its field in the caller's terms). */
  withApiError(apiError: ApiError): UpstreamFailure {
    return new UpstreamFailure(
      this.certainty,
      apiError,
      this.upstreamRequestId,
      this.detail,
      this.upstreamStatus,
      this.origin,
      this.refusal,
    );
  }
}

/** What an upstream's error answer was recognised as (`UpstreamFailure.refusal`). */
export type UpstreamRefusal = 'context_length';

/**
 * Reads an upstream's error answer — its status and its body, read to a bound and parsed (or
 * `undefined`) — into the caller's error when the adapter recognises it; `undefined` leaves it
 * the status's failure (`upstreamStatusFailure`). The body goes no further than this function:
 * it is classified, never passed on.
 */
export type RefusalReader = (
  status: number,
  body: unknown,
) => { apiError: ApiError; refusal: UpstreamRefusal } | undefined;

/**
 * Whether a read (a task poll) failed because the upstream has no such job (404): an upstream
 * that forgot or expired it. The worker counts how long this lasts (docs/tasks.md "Vanished jobs").
 */
export function isNoSuchJob(error: unknown): boolean {
  return error instanceof UpstreamFailure && error.upstreamStatus === 404;
}

export function upstreamStatusFailure(
  status: number,
  upstreamRequestId: string | null,
  recognised?: ReturnType<RefusalReader>,
): UpstreamFailure {
  if (recognised !== undefined)
    return new UpstreamFailure(
      'failed',
      recognised.apiError,
      upstreamRequestId,
      `upstream status ${status}: ${recognised.refusal}`,
      status,
      'upstream',
      recognised.refusal,
    );
  const error =
    status === 429 || status === 503
      ? new ApiError(
          'MODEL_UNAVAILABLE',
          `the model's upstream is unavailable or overloaded (upstream status ${status}); it did not run the request`,
        )
      : new ApiError(
          'UPSTREAM_ERROR',
          `the model's upstream refused the request (upstream status ${status}); nothing was charged`,
        );
  return new UpstreamFailure(
    'failed',
    error,
    upstreamRequestId,
    `upstream status ${status}`,
    status,
  );
}

export function unverifiableBody(
  upstreamRequestId: string | null,
  detail: string,
): UpstreamFailure {
  return new UpstreamFailure(
    'unknown',
    new ApiError(
      'UPSTREAM_ERROR',
      'the upstream answered with a result that could not be verified; the outcome is unknown, read the original request before doing anything else',
    ),
    upstreamRequestId,
    detail,
  );
}

/** Parses an upstream body with its boundary schema; a mismatch is an unverifiable result. */
export function parseUpstream<T>(
  schema: {
    safeParse(
      value: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: { message: string }[] } };
  },
  json: unknown,
  upstreamRequestId: string | null,
  what: string,
): T {
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw unverifiableBody(upstreamRequestId, `${what}: ${parsed.error.issues[0]?.message ?? ''}`);
  return parsed.data;
}

/**
 * A field of the internal request that this upstream's protocol cannot carry (a chat `stop`
 * list to a Responses upstream, a temperature above Anthropic's range): refused before anything
 * is sent, naming the field. Nothing was sent, so the router may try the model's next channel;
 * when none can carry it, the request fails with this 400 and its hold is released.
 */
export function notCarried(field: string, message: string): UpstreamFailure {
  return new UpstreamFailure(
    'failed',
    invalidInput(field, message),
    null,
    `not carried: ${field}`,
    null,
    'gateway',
  );
}
