import { randomUUID } from 'node:crypto';
import { ApiError } from '../../src/errors/api-error.js';
import type { Outcome } from '../../src/requests/request-service.js';
import type { Services } from '../../src/services.js';

/** The outcome of a request whose upstream never confirmed anything (`submission_unknown`). */
export const unknownOutcome: Outcome = {
  kind: 'unknown',
  error: new ApiError('UPSTREAM_TIMEOUT', 'timeout'),
  upstreamRequestId: null,
};

/**
 * A request of `key` that took a hold of `hold` and ended with `outcome`, written through the
 * request service as a route would (claim, then finish). Returns its request id.
 */
export async function finishedRequest(
  services: Pick<Services, 'keys' | 'ids' | 'requests'>,
  options: { key: string; hold: number; outcome: Outcome; model?: string; path?: string },
): Promise<string> {
  const principal = await services.keys.authenticate(options.key);
  const model = options.model ?? 'sim-embed';
  const identity = {
    requestId: services.ids.next('req'),
    principal,
    idempotencyKey: randomUUID(),
    fingerprint: 'f',
    method: 'POST',
    path: options.path ?? '/v1/embeddings',
    model,
  };
  const claim = await services.requests.claim(identity, {
    amount: options.hold,
    priceVersion: `${model}@1`,
  });
  if (claim.kind !== 'claimed') throw new Error(`not claimed: ${claim.kind}`);
  await services.requests.finish(identity, claim.holdId, options.outcome);
  return identity.requestId;
}
