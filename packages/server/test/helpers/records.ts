import { randomUUID } from 'node:crypto';
import { ApiError } from '../../src/errors/api-error.js';
import type { Outcome } from '../../src/requests/request-service.js';
import type { RequestIdentity } from '../../src/requests/request-types.js';
import type { Services } from '../../src/services.js';

/** The outcome of a request whose upstream never confirmed anything (`submission_unknown`). */
export const unknownOutcome: Outcome = {
  kind: 'unknown',
  error: new ApiError('UPSTREAM_TIMEOUT', 'timeout'),
  upstreamRequestId: null,
};

/** An embeddings answer charged `amount`, as a route records it. */
export const succeededOutcome = (amount: number): Outcome => ({
  kind: 'succeeded',
  body: { object: 'list', data: [] },
  usage: { prompt_tokens: 1, total_tokens: 1 },
  amount,
  pricingRule: 'test',
  upstreamRequestId: null,
});

/** A new request of `key` as a route identifies it before its claim (an embedding by default). */
export async function requestIdentity(
  services: Pick<Services, 'keys' | 'ids'>,
  key: string,
  options: { model?: string; path?: string } = {},
): Promise<RequestIdentity> {
  return {
    requestId: services.ids.next('req'),
    principal: await services.keys.authenticate(key),
    idempotencyKey: randomUUID(),
    fingerprint: 'f',
    method: 'POST',
    path: options.path ?? '/v1/embeddings',
    model: options.model ?? 'sim-embed',
  };
}

/**
 * A request of `key` that took a hold of `hold` and ended with `outcome`, written through the
 * request service as a route would (claim, then finish). Returns its request id.
 */
export async function finishedRequest(
  services: Pick<Services, 'keys' | 'ids' | 'requests'>,
  options: { key: string; hold: number; outcome: Outcome; model?: string; path?: string },
): Promise<string> {
  const identity = await requestIdentity(services, options.key, options);
  const claim = await services.requests.claim(identity, {
    amount: options.hold,
    priceVersion: `${identity.model}@1`,
  });
  if (claim.kind !== 'claimed') throw new Error(`not claimed: ${claim.kind}`);
  await services.requests.finish(identity, claim.holdId, options.outcome);
  return identity.requestId;
}
