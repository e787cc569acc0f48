import type { FastifyInstance } from 'fastify';
import { parseUsageRange, usageQuerySchema } from '../../usage/account-usage.js';
import type { AppDeps } from '../deps.js';
import { principalOf } from '../plugins/authenticate.js';

/**
 * `GET /v1/account/usage` (docs/usage.md): the account's spend per UTC day and model. Any key of
 * the account may read it, personal or service: it shows amounts and counts per model, never a
 * record, a prompt or the balance (those stay with the creating key, or with personal keys).
 */
export function registerUsage(v1: FastifyInstance, deps: AppDeps): void {
  v1.get<{ Querystring: { from?: string; to?: string } }>(
    '/v1/account/usage',
    { schema: { querystring: usageQuerySchema } },
    async (request) =>
      deps.accountUsage.read(
        principalOf(request).accountId,
        parseUsageRange(request.query, deps.clock.now()),
      ),
  );
}
