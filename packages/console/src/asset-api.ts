import type {
  AccountShare,
  Asset,
  AssetDeleted,
  AssetList,
  AssetUpload,
  OwnerShareList,
  Share,
  ShareTargetBody,
} from '@tollgate/protocol';
import { request, upload } from './api.js';
import { newIdempotencyKey } from './caller-api.js';

/**
 * The caller's assets and shares (docs/console.md, "Assets and shares"): the account's files,
 * uploads (the file itself as the body, as `POST /v1/assets` takes it), shares and their links.
 */
export const assetApi = {
  assets: () => request<AssetList>('GET', '/assets?limit=100'),
  deleteAsset: (id: string) => request<AssetDeleted>('DELETE', `/assets/${encodeURIComponent(id)}`),
  shares: () => request<OwnerShareList>('GET', '/shares?limit=100'),
  /** Answers the `Share` as `POST /v1/shares` does (202 `pending_review`). */
  askShare: (target: ShareTargetBody) =>
    request<Share>('POST', '/shares', {
      body: target,
      headers: { 'idempotency-key': newIdempotencyKey() },
    }),
  revokeShare: (id: string) => request<AccountShare>('DELETE', `/shares/${encodeURIComponent(id)}`),
};

/**
 * Uploads one file with progress: the file is the body, its type the `Content-Type`, its name
 * `X-Tollgate-File-Name`, a fresh `Idempotency-Key` (and the session's CSRF token, as on every
 * call). Answers the stored asset.
 */
export async function uploadAsset(
  file: File,
  onProgress: (fraction: number) => void,
): Promise<Asset> {
  const headers: Record<string, string> = { 'idempotency-key': newIdempotencyKey() };
  // A header carries printable ASCII only: a name in other letters is not sent (the file keeps
  // its id), rather than stored mangled.
  if (/^[\x20-\x7e]{1,255}$/.test(file.name)) headers['x-tollgate-file-name'] = file.name;
  return (await upload<AssetUpload>('/assets', file, headers, onProgress)).data;
}
