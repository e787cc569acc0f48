import type { Asset, AssetList } from '@tollgate/protocol';
import type { BinaryBody, Transport } from '../http.js';
import type { CallOptions, PostOptions } from '../types.js';
import { download, type Content, type ContentOptions } from './content.js';
import { businessOptions, callOptions, segment } from './shared.js';

export interface UploadOptions extends PostOptions {
  /** The media type the file is (checked against its bytes by the gateway). */
  contentType: string;
  /** Kept as the asset's `file_name`. */
  fileName?: string;
  /** A model whose input requirements the file must meet (`X-Tollgate-Model`). */
  model?: string;
}

/** Personal assets (docs/assets.md): upload, list, ranged download, delete. */
export class Assets {
  constructor(private readonly transport: Transport) {}

  /**
   * `POST /v1/assets` with the raw file as the body: bytes, a Blob, a web stream or a Node
   * stream (sent as it is read, never buffered). A failure after sending is
   * `OutcomeUnknownError`: recover it by its idempotency key, never resend.
   */
  async upload(file: BinaryBody, options: UploadOptions): Promise<Asset> {
    const headers: Record<string, string> = { 'content-type': options.contentType };
    if (options.fileName !== undefined) headers['x-tollgate-file-name'] = options.fileName;
    if (options.model !== undefined) headers['x-tollgate-model'] = options.model;
    const { data } = await this.transport.json<{ data: Asset }>({
      method: 'POST',
      path: '/assets',
      body: file,
      headers,
      ...businessOptions(options),
    });
    return data.data;
  }

  /** One page of the account's assets, newest first (personal keys only). */
  async list(
    page: { limit?: number; after?: string } = {},
    options: CallOptions = {},
  ): Promise<AssetList> {
    const { data } = await this.transport.json<AssetList>({
      method: 'GET',
      path: '/assets',
      query: { limit: page.limit, after: page.after },
      ...callOptions(options),
    });
    return data;
  }

  /** Every asset, page after page. */
  async *iterate(pageSize = 100, options: CallOptions = {}): AsyncGenerator<Asset> {
    let after: string | undefined;
    for (;;) {
      const page = await this.list(
        after === undefined ? { limit: pageSize } : { limit: pageSize, after },
        options,
      );
      yield* page.data;
      if (!page.has_more || page.next_cursor === null) return;
      after = page.next_cursor;
    }
  }

  /** `GET /v1/assets/{id}/content`, whole or a byte range. */
  content(id: string, options: ContentOptions = {}): Promise<Content> {
    return download(this.transport, `/assets/${segment(id)}/content`, options);
  }

  /** `DELETE /v1/assets/{id}` (409 `ASSET_IN_USE` while an unfinished request uses it). */
  async delete(id: string, options: CallOptions = {}): Promise<{ id: string; deleted: boolean }> {
    const { data } = await this.transport.json<{ id: string; deleted: boolean }>({
      method: 'DELETE',
      path: `/assets/${segment(id)}`,
      ...callOptions(options),
    });
    return data;
  }
}
