import { z } from 'zod';
import { isNoSuchJob, parseUpstream } from './upstream-error.js';
import type { UpstreamClient } from './upstream-http.js';

/**
 * What an upstream with `request_lookup` says of a text call by the record id it was sent with
 * (`X-Tollgate-Request-Id`):
 * - `completed`: it did the work; `usage` as its answer carried it (or `null` if it had none);
 * - `failed`: it received the call and did not do (or bill) the work;
 * - `in_progress`: it is still working on it;
 * - `not_received`: it never received a call with this id (404).
 */
export type RequestLookupAnswer =
  | { readonly status: 'completed'; readonly usage: unknown }
  | { readonly status: 'failed' }
  | { readonly status: 'in_progress' }
  | { readonly status: 'not_received' };

const answerSchema = z.object({
  status: z.enum(['completed', 'failed', 'in_progress']),
  usage: z.unknown().optional(),
});

/**
 * `GET <base_url>/tollgate/requests/{id}`: the contract an upstream (or a small proxy in front
 * of it) offers to say what became of a call (docs/requests.md "Reconciled by look-up"). Any
 * failure but a 404 (transport, another status, a body not of this shape) is thrown: the caller
 * tries again later.
 */
export async function lookUpRequest(
  http: UpstreamClient,
  requestId: string,
  signal?: AbortSignal,
): Promise<RequestLookupAnswer> {
  let response;
  try {
    response = await http.getJson(`/tollgate/requests/${encodeURIComponent(requestId)}`, signal);
  } catch (error) {
    if (isNoSuchJob(error)) return { status: 'not_received' };
    throw error;
  }
  const answer = parseUpstream(
    answerSchema,
    response.json,
    response.upstreamRequestId,
    'request look-up',
  );
  if (answer.status === 'completed') return { status: 'completed', usage: answer.usage ?? null };
  return { status: answer.status };
}
