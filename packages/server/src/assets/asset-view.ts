import type { Asset } from '@tollgate/protocol';
import type { AssetTable } from '../store/schema.js';

/** An asset as callers see it (`POST /v1/assets`, `GET /v1/assets`). */
export function assetView(row: AssetTable): Asset {
  return {
    object: 'asset' as const,
    id: row.id,
    media_type: row.media_type,
    bytes: row.bytes,
    sha256: row.sha256,
    width: row.width,
    height: row.height,
    duration_seconds: row.duration_ms === null ? null : row.duration_ms / 1000,
    file_name: row.file_name,
    model: row.model,
    content_url: `/v1/assets/${row.id}/content`,
    created_at: new Date(row.created_at).toISOString(),
  };
}
