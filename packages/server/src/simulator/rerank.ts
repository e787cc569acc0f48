import { randomUUID } from 'node:crypto';
import type { Directives } from './directives.js';
import { BadRequest } from './embeddings.js';
import { countTokens, words } from './tokens.js';

const K1 = 1.2;
const B = 0.75;

/**
 * Okapi BM25 of `query` against each document, the documents being the corpus:
 * idf = ln(1 + (N − n + 0.5) / (n + 0.5)), score = Σ idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)).
 */
export function bm25(query: string, documents: readonly string[]): number[] {
  const tokenized = documents.map(words);
  const count = tokenized.length;
  const averageLength =
    tokenized.reduce((sum, document) => sum + document.length, 0) / Math.max(count, 1) || 1;
  const queryTerms = [...new Set(words(query))];
  const documentFrequency = new Map(
    queryTerms.map((term) => [
      term,
      tokenized.filter((document) => document.includes(term)).length,
    ]),
  );
  return tokenized.map((document) => {
    let score = 0;
    for (const term of queryTerms) {
      const frequency = document.filter((token) => token === term).length;
      if (frequency === 0) continue;
      const containing = documentFrequency.get(term) ?? 0;
      const idf = Math.log(1 + (count - containing + 0.5) / (containing + 0.5));
      score +=
        (idf * frequency * (K1 + 1)) /
        (frequency + K1 * (1 - B + (B * document.length) / averageLength));
    }
    return score;
  });
}

export interface RerankInput {
  model: string;
  query: string;
  documents: string[];
  topN: number;
  returnDocuments: boolean;
}

export function parseRerankBody(body: unknown): RerankInput {
  if (typeof body !== 'object' || body === null) throw new BadRequest('body must be a JSON object');
  const {
    model,
    query,
    documents,
    top_n: topN,
    return_documents: returnDocuments,
  } = body as Record<string, unknown>;
  if (typeof model !== 'string' || model === '') throw new BadRequest('model is required');
  if (typeof query !== 'string') throw new BadRequest('query must be a string');
  if (!Array.isArray(documents) || documents.length === 0)
    throw new BadRequest('documents must be a non-empty array');
  const texts = documents.map((document: unknown) => {
    if (typeof document === 'string') return document;
    const text = (document as { text?: unknown } | null)?.text;
    if (typeof text !== 'string')
      throw new BadRequest('each document must be a string or {"text": string}');
    return text;
  });
  const limit = topN ?? texts.length;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)
    throw new BadRequest('top_n must be a positive integer');
  if (returnDocuments !== undefined && typeof returnDocuments !== 'boolean')
    throw new BadRequest('return_documents must be a boolean');
  return { model, query, documents: texts, topN: limit, returnDocuments: returnDocuments === true };
}

/** Cohere/Jina-shaped answer; usage counts query + document tokens for every document. */
export function rerankResponse(
  input: RerankInput,
  cleanedQuery: string,
  cleanedDocuments: string[],
  directives: Directives,
) {
  const scores = bm25(cleanedQuery, cleanedDocuments);
  const ranked = scores
    .map((score, index) => ({ index, score }))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, input.topN);
  const queryTokens = countTokens(cleanedQuery);
  const tokens =
    cleanedDocuments.reduce((sum, document) => sum + queryTokens + countTokens(document), 0) +
    (directives.extraTokens ?? 0);
  return {
    id: randomUUID(),
    results: ranked.map(({ index, score }) => ({
      index,
      relevance_score: score,
      ...(input.returnDocuments ? { document: { text: input.documents[index] ?? '' } } : {}),
    })),
    meta: { billed_units: { search_units: 1 } },
    ...(directives.noUsage === true ? {} : { usage: { total_tokens: tokens } }),
  };
}
