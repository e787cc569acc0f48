import { H3_SETTLE_CONFIRMATION } from '@tollgate/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { jsonSchemaOf, valuesOnly } from '../../errors/input-schema.js';
import { h3BodySchema, parseH3Body, type H3Body } from '../../h3/h3-input.js';
import { readIdempotencyKey } from '../../requests/idempotency.js';
import { settleBodySchemaFor } from '../../tasks/task-settlement.js';
import { requestIdentity } from '../billed-request.js';
import { answerClaim as answer } from '../claim-answer.js';
import type { AppDeps } from '../deps.js';
import { principalOf } from '../plugins/authenticate.js';
import { registerSettle, registerTaskContent } from './tasks.js';

/** `?refresh=true` asks the provider again before answering (docs/h3.md); no other parameter. */
const readQuery = z.strictObject({ refresh: valuesOnly(z.enum(['true', 'false'])).optional() });
const readQuerySchema = jsonSchemaOf(readQuery);
type ReadQueryString = z.output<typeof readQuery>;

const isSubmit = (body: unknown): boolean =>
  (body as { operation?: unknown } | undefined)?.operation === 'submit';

/**
 * H3 tasks (spec 4.4, 4.5; docs/h3.md): one endpoint for quote and submit, reads (with an
 * explicit refresh), settlement with the H3 confirmation word, and the delivered video. Routes
 * parse, call one service, answer.
 */
export function registerH3(scope: FastifyInstance, deps: AppDeps): void {
  scope.post<{ Body: H3Body }>(
    '/v1/h3/tasks',
    // Only a submit is recorded; a quote's key is read, never judged (plugins/idempotency-guard.ts).
    { config: { businessPost: isSubmit }, schema: { body: h3BodySchema } },
    async (request, reply) => {
      const parsed = parseH3Body(request.body);
      if (parsed.operation === 'quote') {
        // A quote is read-only, yet carries its Idempotency-Key like every business POST (spec 4.4).
        readIdempotencyKey(request.headers);
        return deps.h3.quote(principalOf(request), parsed);
      }
      return answer(
        reply,
        await deps.h3.submit(requestIdentity(request, request.body.model), parsed),
      );
    },
  );

  scope.get<{ Params: { id: string }; Querystring: ReadQueryString }>(
    '/v1/h3/tasks/:id',
    { schema: { querystring: readQuerySchema } },
    async (request) =>
      request.query.refresh === 'true'
        ? deps.h3.refresh(principalOf(request), request.params.id)
        : deps.h3.read(principalOf(request), request.params.id),
  );

  registerSettle(scope, deps, {
    kind: 'h3',
    path: '/v1/h3/tasks/:id/settle',
    schema: settleBodySchemaFor(H3_SETTLE_CONFIRMATION),
  });
  registerTaskContent(scope, deps, { kind: 'h3', path: '/v1/h3/tasks/:id/content' });
}
