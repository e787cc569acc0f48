import { z } from 'zod';
import type { FastifyInstance } from 'fastify';
import { costPerMillion } from '../../billing/money.js';
import { invalidInput } from '../../errors/api-error.js';
import { jsonSchemaOf } from '../../errors/input-schema.js';
import { principalOf } from '../plugins/authenticate.js';
import { inputTokenOutcome } from '../../requests/input-token-outcome.js';
import { runBilledRequest } from '../billed-request.js';
import { judgedAtClaim } from '../idempotency-judgement.js';
import type { AppDeps } from '../deps.js';
import { upstreamCaller } from '../upstream-caller.js';
import { checkInputBytes } from '../../models/input-bytes.js';
import { SPECIAL_TOKENS_PER_TEXT } from './worst-case.js';

/** The Cohere/Jina rerank body: a query and its documents (texts, or `{text}` objects). */
const rerankBody = z.strictObject({
  model: z.string().min(1).max(200),
  query: z.string().min(1),
  documents: z.array(z.union([z.string(), z.strictObject({ text: z.string() })])).min(1),
  top_n: z.int().min(1).optional(),
  return_documents: z.boolean().optional(),
});
/** The route's schema, checked by Ajv before the handler runs (the type below is its own). */
export const rerankBodySchema = jsonSchemaOf(rerankBody);
type RerankBody = z.output<typeof rerankBody>;

/**
 * `POST /v1/rerank`, Cohere/Jina shape. Billed on the upstream's reported tokens; the worst
 * case counts the query once per document, as rerankers read (query, document) pairs.
 */
export function registerRerank(scope: FastifyInstance, deps: AppDeps): void {
  scope.post<{ Body: RerankBody }>(
    '/v1/rerank',
    judgedAtClaim<{ Body: RerankBody }>(
      deps.requests.records,
      { schema: { body: rerankBodySchema } },
      async (request, reply) => {
        const body = request.body;
        const model = deps.catalog.resolve(principalOf(request), body.model, 'rerank');
        if (body.documents.length > model.max_documents)
          throw invalidInput(
            'documents',
            `at most ${model.max_documents} documents for ${model.id}`,
          );
        const documents = body.documents.map((document) =>
          typeof document === 'string' ? document : document.text,
        );
        const queryBytes = Buffer.byteLength(body.query, 'utf8');
        let bytes = 0;
        for (const document of documents) bytes += queryBytes + Buffer.byteLength(document, 'utf8');
        // Counts the query once per document, as rerankers read (query, document) pairs.
        checkInputBytes(model, bytes, 'documents');
        const worstTokens = bytes + SPECIAL_TOKENS_PER_TEXT * documents.length;
        const price = await deps.prices.currentFor(model.id);
        const perMillion = price.prices.input_per_million_tokens ?? 0;
        const topN = body.top_n === undefined ? undefined : Math.min(body.top_n, documents.length);
        const caller = upstreamCaller(request, reply);
        const routing = deps.channels.route(model, caller.presence);
        return runBilledRequest(deps, request, reply, {
          model: model.id,
          routing,
          reserve: {
            amount: costPerMillion(worstTokens, perMillion),
            priceVersion: price.priceVersion,
          },
          execute: async () => {
            const result = await routing.run((channel) =>
              deps.providers.rerank(channel.upstream, caller).rerank({
                model: channel.model,
                query: body.query,
                documents,
                topN,
              }),
            );
            const usage = { total_tokens: result.totalTokens };
            return inputTokenOutcome({
              family: 'rerank',
              field: 'total_tokens',
              reportedTokens: result.totalTokens,
              worstCaseTokens: worstTokens,
              perMillion,
              routing,
              usage,
              upstreamRequestId: result.upstreamRequestId,
              body: {
                id: request.id,
                object: 'rerank',
                model: model.id,
                results: result.results.map((item) => ({
                  index: item.index,
                  relevance_score: item.relevanceScore,
                  ...(body.return_documents === true
                    ? { document: { text: documents[item.index] ?? '' } }
                    : {}),
                })),
                usage,
              },
            });
          },
        });
      },
    ),
  );
}
