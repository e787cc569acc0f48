import { z } from 'zod';
import { parseUpstream, unverifiableBody } from '../upstream-error.js';
import type { UpstreamClient } from '../upstream-http.js';
import type { RerankProvider, RerankRequest, RerankResult } from '../types.js';

const responseSchema = z.object({
  results: z.array(
    z.object({ index: z.number().int().nonnegative(), relevance_score: z.number().finite() }),
  ),
  // Jina and our simulator report tokens; a body without them cannot be priced by token.
  usage: z.object({ total_tokens: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER) }),
});

/** Cohere/Jina-style `POST /rerank`. */
export class CohereRerank implements RerankProvider {
  constructor(private readonly http: UpstreamClient) {}

  async rerank(request: RerankRequest, signal?: AbortSignal): Promise<RerankResult> {
    const response = await this.http.postJson(
      '/rerank',
      {
        model: request.model,
        query: request.query,
        documents: request.documents,
        return_documents: false,
        ...(request.topN === undefined ? {} : { top_n: request.topN }),
      },
      signal,
    );
    const data = parseUpstream(
      responseSchema,
      response.json,
      response.upstreamRequestId,
      'rerank body',
    );
    const seen = new Set<number>();
    for (const result of data.results) {
      if (result.index >= request.documents.length || seen.has(result.index)) {
        throw unverifiableBody(
          response.upstreamRequestId,
          `rerank index ${result.index} out of range or repeated`,
        );
      }
      seen.add(result.index);
    }
    const limit = request.topN ?? request.documents.length;
    if (data.results.length > limit)
      throw unverifiableBody(response.upstreamRequestId, 'more results than asked');
    return {
      results: data.results.map((result) => ({
        index: result.index,
        relevanceScore: result.relevance_score,
      })),
      totalTokens: data.usage.total_tokens,
      upstreamRequestId: response.upstreamRequestId,
    };
  }
}
