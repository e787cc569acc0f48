/**
 * A personal asset (`POST /v1/assets` answers `{"data": Asset}`; docs/assets.md): an uploaded
 * file, or a delivered output of an image or video task. Its id goes into `assetIds`.
 */
export interface Asset {
  object: 'asset';
  /** `asset_…`. */
  id: string;
  /** As sniffed from the bytes (never the caller's `Content-Type` alone). */
  media_type: string;
  /** Size in bytes. */
  bytes: number;
  /** Hex SHA-256 of the content (also its `ETag`). */
  sha256: string;
  /** Images and videos: pixels, when read from the file; else `null`. */
  width: number | null;
  height: number | null;
  /** Audio and video: the duration in seconds, when read from the file; else `null`. */
  duration_seconds: number | null;
  /** The `X-Tollgate-File-Name` given at upload; `null` when none. */
  file_name: string | null;
  /** The model it was checked for at upload, or the model that produced it; else `null`. */
  model: string | null;
  /** `/v1/assets/{id}/content` (GET, HEAD, Range) with a personal key of the account. */
  content_url: string;
  /** ISO 8601. */
  created_at: string;
}

/** `GET /v1/assets?limit=&after=`: the account's delivered, undeleted assets, newest first. */
export interface AssetList {
  object: 'list';
  data: Asset[];
  /** Whether another page follows; ask for it with `after=next_cursor`. */
  has_more: boolean;
  /** The last id of this page when `has_more`; else `null`. */
  next_cursor: string | null;
}

/** `POST /v1/assets`: the one wrapped single object, as the specification fixes it (spec 2.4). */
export interface AssetUpload {
  data: Asset;
}

/** `DELETE /v1/assets/{id}`. */
export interface AssetDeleted {
  object: 'asset';
  id: string;
  deleted: true;
}
