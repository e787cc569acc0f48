import type { Transport } from '../http.js';
import type { EmbeddingList, EmbeddingParams, PostOptions } from '../types.js';
import { businessOptions } from './shared.js';

/** `POST /v1/embeddings`: vectors, billed on usage. */
export class Embeddings {
  constructor(private readonly transport: Transport) {}

  /** A failure after sending is `OutcomeUnknownError`: recover, never resend. */
  async create(params: EmbeddingParams, options: PostOptions = {}): Promise<EmbeddingList> {
    const { data } = await this.transport.json<EmbeddingList>({
      method: 'POST',
      path: '/embeddings',
      json: params,
      ...businessOptions(options),
    });
    return data;
  }
}
