import { ApiFailure, call, csrfHeaders, type Page } from './api.js';
import { newIdempotencyKey } from './caller-api.js';

/**
 * The caller's assets and shares (docs/console.md, "Assets and shares"): the account's files,
 * uploads (the file itself as the body, as `POST /v1/assets` takes it), shares and their links.
 */

export interface Asset {
  id: string;
  media_type: string;
  bytes: number;
  width: number | null;
  height: number | null;
  file_name: string | null;
  created_at: string;
}

export type ShareState = 'pending_review' | 'approved' | 'rejected' | 'revoked';

export interface ConsoleShare {
  id: string;
  state: ShareState;
  task_id: string | null;
  asset_id: string;
  created_at: string;
  decided_at: string | null;
  reason: string | null;
  /** The path of the public link while it serves, for a share asked for from the console. */
  public_url: string | null;
  /** `api_key`: asked for by a key, whose link only that key can read. */
  token_source: 'api_key' | 'console';
  key_id: string;
  media_type: string;
  bytes: number;
}

export const assetApi = {
  assets: () => call<Page<Asset>>('GET', '/assets?limit=100'),
  deleteAsset: (id: string) => call<unknown>('DELETE', `/assets/${encodeURIComponent(id)}`),
  shares: () => call<Page<ConsoleShare>>('GET', '/shares?limit=100'),
  askShare: (target: { asset_id: string } | { task_id: string }) =>
    call<ConsoleShare>('POST', '/shares', target, { 'idempotency-key': newIdempotencyKey() }),
  revokeShare: (id: string) => call<ConsoleShare>('DELETE', `/shares/${encodeURIComponent(id)}`),
};

/**
 * Uploads one file with progress (`fetch` reports none while sending): the file is the body, its
 * type the `Content-Type`, its name `X-Tollgate-File-Name`, a fresh `Idempotency-Key`, and the
 * session's CSRF token.
 */
export function uploadAsset(file: File, onProgress: (fraction: number) => void): Promise<Asset> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', '/console/api/assets');
    request.setRequestHeader(
      'content-type',
      file.type === '' ? 'application/octet-stream' : file.type,
    );
    request.setRequestHeader('idempotency-key', newIdempotencyKey());
    // A header carries printable ASCII only: a name in other letters is not sent (the file keeps
    // its id), rather than stored mangled.
    if (/^[\x20-\x7e]{1,255}$/.test(file.name))
      request.setRequestHeader('x-tollgate-file-name', file.name);
    for (const [name, value] of Object.entries(csrfHeaders()))
      request.setRequestHeader(name, value);
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    request.onload = () => {
      let answer: unknown = null;
      try {
        answer = JSON.parse(request.responseText) as unknown;
      } catch {
        // Not JSON (a proxy's page): reported by its status below.
      }
      if (request.status >= 200 && request.status < 300) resolve((answer as { data: Asset }).data);
      else {
        const error = (answer as { error?: { code?: string; message?: string } } | null)?.error;
        reject(
          new ApiFailure(
            request.status,
            error?.code ?? 'UNKNOWN',
            error?.message ?? `HTTP ${request.status}`,
          ),
        );
      }
    };
    request.onerror = () =>
      reject(new ApiFailure(0, 'NETWORK', 'the upload did not reach the gateway'));
    request.send(file);
  });
}
