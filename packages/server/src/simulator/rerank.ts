import { randomUUID } from 'node:crypto';
import type { Directives } from './directives.js';
import { BadRequest } from './embeddings.js';
import { SIMULATOR_LIMITS } from './limits.js';
import { countTokens, words } from './tokens.js';

const K1 = 1.2;
const B = 0.75;

/**
 * Okapi BM25 of `query` against each document, the documents being the corpus:
 * idf = ln(1 + (N − n + 0.5) / (n + 0.5)), score = Σ idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)).
 * Linear in the total number of words: each document's term counts are built once, and only
 * its terms that are query terms are scored (no query-terms × documents scan).
 */
export function bm25(query: string, documents: readonly string[]): number[] {
  // Query terms in query order: scores sum in that order, whatever order documents use.
  const queryTerms = new Map([...new Set(words(query))].map((term, index) => [term, index]));
  const counted = documents.map((document) => {
    const terms = words(document);
    const frequencies = new Map<string, number>();
    for (const term of terms)
      if (queryTerms.has(term)) frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
    return { length: terms.length, frequencies };
  });
  const count = counted.length;
  const averageLength =
    counted.reduce((sum, document) => sum + document.length, 0) / Math.max(count, 1) || 1;
  const documentFrequency = new Map<string, number>();
  for (const { frequencies } of counted)
    for (const term of frequencies.keys())
      documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  return counted.map((document) => {
    let score = 0;
    const matched = [...document.frequencies].sort(
      ([a], [b]) => (queryTerms.get(a) ?? 0) - (queryTerms.get(b) ?? 0),
    );
    for (const [term, frequency] of matched) {
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
  if (documents.length > SIMULATOR_LIMITS.rerankDocuments)
    throw new BadRequest(`documents must hold at most ${SIMULATOR_LIMITS.rerankDocuments} items`);
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
