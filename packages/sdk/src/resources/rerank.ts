import type { Transport } from '../http.js';
import type { PostOptions, RerankParams, RerankResult } from '../types.js';
import { businessOptions } from './shared.js';

/** `POST /v1/rerank`: indexes and relevance scores, billed on usage. */
export class Rerank {
  constructor(private readonly transport: Transport) {}

  /** A failure after sending is `OutcomeUnknownError`: recover, never resend. */
  async create(params: RerankParams, options: PostOptions = {}): Promise<RerankResult> {
    const { data } = await this.transport.json<RerankResult>({
      method: 'POST',
      path: '/rerank',
      json: params,
      ...businessOptions(options),
    });
    return data;
  }
}
