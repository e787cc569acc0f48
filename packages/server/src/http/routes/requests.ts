import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import {
  parseRequestsQuery,
  requestsQuerySchema,
  type RequestsQueryString,
} from '../../usage/request-list-query.js';
import { principalOf } from '../plugins/authenticate.js';
import type { AppDeps } from '../deps.js';
import { refuseQueryString } from '../settle-rules.js';
import { requestIdentity } from '../billed-request.js';
import { answerClaim } from '../claim-answer.js';

/** Recovery reads and settlement of the original request record (spec 4.2). */
export function registerRequests(scope: FastifyInstance, deps: AppDeps): void {
  scope.get<{ Params: { id: string } }>('/v1/requests/:id', async (request) =>
    deps.requests.read(principalOf(request), request.params.id),
  );

  // One record by idempotency key (spec 4.2), or the key's own list (docs/requests.md, "Listing").
  scope.get<{ Querystring: RequestsQueryString }>(
    '/v1/requests',
    { schema: { querystring: requestsQuerySchema } },
    async (request) => {
      const query = parseRequestsQuery(request.query);
      return query.mode === 'lookup'
        ? deps.requests.readByIdempotencyKey(principalOf(request), query.idempotencyKey)
        : deps.requestListing.list(principalOf(request), query.filter);
    },
  );

  scope.post<{ Params: { id: string } }>('/v1/requests/:id/settle', async (request, reply) => {
    const identity = requestIdentity(request, null);
    refuseQueryString(request);
    const length = Number(request.headers['content-length'] ?? 0);
    if (length > 0 || (request.body !== undefined && request.body !== null)) {
      throw new ApiError(
        'INVALID_INPUT',
        'settle takes an empty body: it settles the original request as it was',
        'body',
      );
    }
    return answerClaim(reply, await deps.settlements.settle(identity, request.params.id));
  });
}
