import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { readIdempotencyKey } from '../../requests/idempotency.js';
import { principalOf } from '../plugins/authenticate.js';
import type { AppDeps } from '../deps.js';
import { refuseQueryString } from '../settle-rules.js';

/** Recovery reads and settlement of the original request record (spec 4.2). */
export function registerRequests(scope: FastifyInstance, deps: AppDeps): void {
  scope.get<{ Params: { id: string } }>('/v1/requests/:id', async (request) =>
    deps.requests.read(principalOf(request), request.params.id),
  );

  scope.get<{ Querystring: { idempotency_key?: string } }>(
    '/v1/requests',
    {
      schema: {
        querystring: {
          type: 'object',
          required: ['idempotency_key'],
          additionalProperties: false,
          properties: { idempotency_key: { type: 'string', minLength: 1, maxLength: 200 } },
        },
      },
    },
    async (request) =>
      deps.requests.readByIdempotencyKey(principalOf(request), request.query.idempotency_key ?? ''),
  );

  scope.post<{ Params: { id: string } }>('/v1/requests/:id/settle', async (request, reply) => {
    const idempotencyKey = readIdempotencyKey(request.headers);
    refuseQueryString(request);
    const length = Number(request.headers['content-length'] ?? 0);
    if (length > 0 || (request.body !== undefined && request.body !== null)) {
      throw new ApiError(
        'INVALID_INPUT',
        'settle takes an empty body: it settles the original request as it was',
        'body',
      );
    }
    const { view, replayed } = await deps.settlements.settle(
      principalOf(request),
      request.params.id,
      idempotencyKey,
    );
    if (replayed) void reply.header('idempotent-replayed', 'true');
    return view;
  });
}
