import type { FastifyReply } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import type { Claim } from '../requests/request-service.js';

/**
 * The answer of a claim made with work inside it (task creation and settlement, shares): the
 * fresh result, or a replay of the original with `Idempotent-Replayed` and its request id; a
 * refusal is thrown as the error it is.
 */
export function answerClaim(reply: FastifyReply, claim: Claim): FastifyReply {
  if (claim.kind === 'refused') throw claim.error;
  if (claim.kind === 'claimed')
    throw new ApiError('INTERNAL_ERROR', 'a claim with work inside finished without an answer');
  if (claim.fresh !== true)
    void reply
      .header('idempotent-replayed', 'true')
      .header('x-service-request-id', claim.requestId);
  return reply.code(claim.status).send(claim.body);
}
