import { z } from 'zod';
import type { ProviderDialectName } from '../../config/schema.js';
import { contextLengthReader } from '../context-length.js';
import { parseUpstream, unverifiableBody } from '../upstream-error.js';
import type { UpstreamClient } from '../upstream-http.js';
import type { EmbeddingsProvider, EmbeddingsRequest, EmbeddingsResult } from '../types.js';

const tokenCount = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

const responseSchema = z.object({
  data: z.array(
    z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number().finite()) }),
  ),
  usage: z.object({ prompt_tokens: tokenCount, total_tokens: tokenCount.optional() }),
});

/**
 * OpenAI-compatible `POST /embeddings` (OpenAI, vLLM, Ollama, ...). Always asks for floats. An
 * input beyond the model's context window is read by the rule of the upstream's `dialect`
 * (context-length.ts: OpenAI's 400 "This model's maximum context length is N tokens, however
 * you requested M tokens", `code` null, which vLLM's embeddings answer shares; Qwen's "Range of
 * input length"; …) as the caller's 400 naming `input`; the route names the model
 * (routes/embeddings.ts).
 */
export class OpenAiEmbeddings implements EmbeddingsProvider {
  constructor(
    private readonly http: UpstreamClient,
    /** The upstream's provider, whose context-length rule applies (default OpenAI's). */
    private readonly dialect: ProviderDialectName = 'openai',
  ) {}

  async embed(request: EmbeddingsRequest, signal?: AbortSignal): Promise<EmbeddingsResult> {
    const response = await this.http.postJson(
      '/embeddings',
      {
        model: request.model,
        input: request.input,
        encoding_format: 'float',
        ...(request.dimensions === undefined ? {} : { dimensions: request.dimensions }),
      },
      signal,
      undefined,
      contextLengthReader(this.dialect, undefined, 'embeddings'),
    );
    const data = parseUpstream(
      responseSchema,
      response.json,
      response.upstreamRequestId,
      'embeddings body',
    );
    const vectors: number[][] = new Array<number[]>(request.input.length);
    for (const item of data.data) {
      if (item.index >= request.input.length || vectors[item.index] !== undefined) {
        throw unverifiableBody(
          response.upstreamRequestId,
          `embedding index ${item.index} out of range or repeated`,
        );
      }
      if (request.dimensions !== undefined && item.embedding.length !== request.dimensions) {
        throw unverifiableBody(
          response.upstreamRequestId,
          `embedding has ${item.embedding.length} dimensions, asked ${request.dimensions}`,
        );
      }
      vectors[item.index] = item.embedding;
    }
    if (data.data.length !== request.input.length) {
      throw unverifiableBody(
        response.upstreamRequestId,
        `${data.data.length} embeddings for ${request.input.length} inputs`,
      );
    }
    return {
      vectors,
      promptTokens: data.usage.prompt_tokens,
      upstreamRequestId: response.upstreamRequestId,
    };
  }
}
