/**
 * The provider contract (version 1). A provider speaks one upstream protocol; every response
 * body is parsed with a schema at the boundary, so nothing unchecked reaches a caller. Failures
 * are thrown as `UpstreamFailure` (failed vs unknown).
 */
export interface EmbeddingsRequest {
  readonly model: string;
  /** Texts, or (OpenAI's token-array form) lists of token ids, one per input. */
  readonly input: readonly string[] | readonly (readonly number[])[];
  readonly dimensions: number | undefined;
}

export interface EmbeddingsResult {
  readonly vectors: number[][];
  readonly promptTokens: number;
  readonly upstreamRequestId: string | null;
}

export interface RerankRequest {
  readonly model: string;
  readonly query: string;
  readonly documents: readonly string[];
  readonly topN: number | undefined;
}

export interface RerankResult {
  readonly results: { index: number; relevanceScore: number }[];
  readonly totalTokens: number;
  readonly upstreamRequestId: string | null;
}

export interface EmbeddingsProvider {
  embed(request: EmbeddingsRequest, signal?: AbortSignal): Promise<EmbeddingsResult>;
}

export interface RerankProvider {
  rerank(request: RerankRequest, signal?: AbortSignal): Promise<RerankResult>;
}
