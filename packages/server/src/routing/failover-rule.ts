import type { UpstreamConfig } from '../config/schema.js';
import { UpstreamFailure } from '../providers/upstream-error.js';

/**
 * Upstream statuses answered before any work, per adapter kind (docs/routing.md, "Failover
 * rule"): 429 (rate or quota refusal) and 503 (overloaded, not started) everywhere, and 401
 * (this channel's key refused: checked before the request is read). Any other status, 5xx
 * included, may come after the work began: it never moves a request to another channel.
 */
export const CERTAIN_FAILURE_STATUSES: Readonly<Record<UpstreamConfig['kind'], readonly number[]>> =
  {
    openai: [401, 429, 503],
    cohere: [401, 429, 503],
    ark: [401, 429, 503],
    simulator: [401, 429, 503],
  };

/** Why a failed attempt may, or may not, be sent again on another channel. */
export type AttemptVerdict = 'not_processed' | 'maybe_processed' | 'refused';

/**
 * The failover rule: only an attempt the upstream certainly did not process moves on. That is a
 * failure before a byte was sent (connection refused, DNS or TLS failure, local socket failure:
 * `failed` with no upstream status) or a status on the adapter's certain-failure list. A
 * timeout after sending, a dropped connection, a body we cannot verify are `unknown`
 * (`maybe_processed`); any other error status is a definite refusal of this request
 * (`refused`): the hold is released and the caller told, never sent elsewhere.
 */
export function judgeAttempt(error: unknown, kind: UpstreamConfig['kind']): AttemptVerdict {
  if (!(error instanceof UpstreamFailure) || error.certainty !== 'failed') return 'maybe_processed';
  if (error.upstreamStatus === null) return 'not_processed';
  return CERTAIN_FAILURE_STATUSES[kind].includes(error.upstreamStatus)
    ? 'not_processed'
    : 'refused';
}
