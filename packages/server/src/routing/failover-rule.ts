import type { UpstreamConfig } from '../config/schema.js';
import { UpstreamFailure } from '../providers/upstream-error.js';

/**
 * Upstream statuses answered before any work, per adapter kind (docs/routing.md, "Failover
 * rule"): 429 (rate or quota refusal) and 503 (overloaded, not started) everywhere, and 401
 * (this channel's key refused: checked before the request is read). Any other status, 5xx
 * included, may come after the work began: it never moves a request to another channel.
 * Requests only: a task's submission follows its upstream's `task_failover_statuses` instead.
 */
export const CERTAIN_FAILURE_STATUSES: Readonly<Record<UpstreamConfig['kind'], readonly number[]>> =
  {
    openai: [401, 429, 503],
    cohere: [401, 429, 503],
    ark: [401, 429, 503],
    simulator: [401, 429, 503],
    // Anthropic's "overloaded" is 529, answered before any work.
    anthropic: [401, 429, 529],
  };

/** Why a failed attempt may, or may not, be sent again on another channel. */
export type AttemptVerdict = 'not_processed' | 'maybe_processed' | 'refused';

/** What the rule reads of the channel's upstream. */
export type FailoverUpstream = Pick<UpstreamConfig, 'kind' | 'task_failover_statuses'>;

/**
 * What the attempt sent: a `request` (chat, embeddings, rerank, OCR: an answer within the call)
 * or a `task` submission (images, videos, H3: a job the upstream bills on its own).
 */
export type FailoverPurpose = 'request' | 'task';

/**
 * The failover rule: only an attempt the upstream certainly did not process moves on. That is a
 * failure before a byte was sent (connection refused, DNS or TLS failure, local socket failure,
 * no free connection: `failed` with no upstream status), or a status on the certain-failure
 * list: the adapter's (`CERTAIN_FAILURE_STATUSES`) for a request; for a task only the statuses
 * its upstream's `task_failover_statuses` names (default none), since a 503 or 429 written by a
 * proxy or load balancer after it forwarded the submission means a job already made there, and
 * a second one elsewhere is billed separately (the task id as `Idempotency-Key` does not dedupe
 * across providers). A timeout after sending, a dropped connection, a body we cannot verify
 * are `unknown` (`maybe_processed`); any other error status is a definite refusal of this
 * attempt (`refused`): the hold is released and the caller told, never sent elsewhere. An error
 * answer its adapter recognised as the caller's own (`UpstreamFailure.refusal`: a context-length
 * refusal) is `refused` whatever its status.
 */
export function judgeAttempt(
  error: unknown,
  upstream: FailoverUpstream,
  purpose: FailoverPurpose = 'request',
): AttemptVerdict {
  if (!(error instanceof UpstreamFailure) || error.certainty !== 'failed') return 'maybe_processed';
  if (error.upstreamStatus === null) return 'not_processed';
  // The provider refused the caller's input (too long for the model's context window): the
  // request's own fault, whichever channel it went to, so it is the caller's to fix. Another
  // channel of the same model would refuse it too (and if one had a larger window, the caller
  // would be served by chance of the pick); nor does it say anything of this channel's health.
  if (error.refusal !== null) return 'refused';
  const certain =
    purpose === 'task' ? upstream.task_failover_statuses : CERTAIN_FAILURE_STATUSES[upstream.kind];
  return certain.includes(error.upstreamStatus) ? 'not_processed' : 'refused';
}
