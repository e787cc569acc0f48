/*
 * A member's calls of `/console/api` (docs/console.md, "The caller's pages and their API"): the
 * account's keys, its records, tasks and shares as the account's owner sees them (every key's,
 * each naming its key), spend per key, and the bodies those pages send. What `/v1` answers the
 * same way (the account, usage, assets, a settled task or record) keeps its `/v1` type.
 * Amounts are integer micro-yuan (CNY_MICRO), safe integers; times ISO 8601 strings.
 */

import type { KeyNames } from './console-names.js';
import type { H3Task } from './h3.js';
import type { ApiKey, KeyIdempotency, KeyKind, NewApiKey } from './keys.js';
import type { MicroYuan } from './money.js';
import type { Share } from './shares.js';
import type { Task } from './tasks.js';
import type { RequestList, RequestSummary } from './usage.js';

/**
 * `GET /console/api/keys` (the member's account) and `GET /console/api/admin/accounts/{id}/keys`:
 * every key of the account, unpaged.
 */
export interface ApiKeyList {
  object: 'list';
  data: ApiKey[];
}

/**
 * `POST /console/api/keys`: a new key of the member's account (answered as `NewApiKey`, its
 * plaintext in that answer only). Absent fields take the defaults of docs/keys.md.
 */
export interface ConsoleKeyCreateBody {
  /** At most 100 characters. */
  name?: string;
  /** `personal` when absent. */
  kind?: KeyKind;
  /** The model allowlist, configured model ids; absent: every model. */
  models?: string[];
  /** ISO 8601 (or epoch milliseconds), in the future; absent: the key never expires. */
  expires_at?: string | number;
  /** `required` when absent. */
  idempotency?: KeyIdempotency;
}

/** `POST /console/api/keys/{id}/rotate` (201): the new key, its plaintext shown this once. */
export type RotatedApiKey = NewApiKey & {
  /** The rotated key, as it is now (`replaced_by` the new key's id). */
  replaces: ApiKey;
};

/** `POST /console/api/keys/{id}/rotate`: an empty body retires the old key at once. */
export interface KeyRotateBody {
  /** Keep the old key working this long, 0 to 604800 (7 days). */
  expire_old_in_seconds?: number;
}

/** `POST /console/api/redemptions`: redeem a code (answered as the `Account`). */
export interface RedemptionBody {
  code: string;
}

/**
 * One record of the account as its owner sees it (`GET /console/api/requests`,
 * `GET /console/api/requests/{id}`): the summary `GET /v1/requests` lists, the key that made it
 * and that key's name.
 */
export interface OwnerRequestSummary extends RequestSummary, KeyNames {
  key_id: string;
}

/**
 * `GET /console/api/requests`: the records of every key of the account, newest first, with the
 * filters and cursor of `GET /v1/requests` (docs/console.md, "Requests page").
 */
export interface OwnerRequestList extends Omit<RequestList, 'data'> {
  data: OwnerRequestSummary[];
}

/** A task of the account: the view of the key that created it, and that key's id. */
export type AccountTask = (Task | H3Task) & { key_id: string };

/** A task as `/console/api/tasks` shows it to the account's owner: naming its key. */
export type OwnerTask = AccountTask & KeyNames;

/** `GET /console/api/tasks`: the account's tasks, newest first, at most 100, unpaged. */
export interface OwnerTaskList {
  object: 'list';
  data: OwnerTask[];
}

/** One key's spend over the range. */
export interface KeySpendRow extends KeyNames {
  /** `null`: captures whose record is gone (purged after its retention). */
  key_id: string | null;
  /** Charged requests and tasks (captures). */
  requests: number;
  /** Micro-yuan captured. */
  amount: MicroYuan;
}

/** `GET /console/api/usage/keys?from&to`: spend per key over UTC days (the keys page's chart). */
export interface KeySpend {
  object: 'list';
  account_id: string;
  /** First day, `YYYY-MM-DD` (UTC), included. */
  from: string;
  /** Last day, `YYYY-MM-DD` (UTC), included. */
  to: string;
  /** Keys with captures in the range, by `key_id`. */
  data: KeySpendRow[];
}

/**
 * A share of the account as its owner reads it (`GET /console/api/shares/{id}`, the answer of
 * `DELETE /console/api/shares/{id}`): the owner's `Share`, who asked for it, and what it serves.
 */
export interface AccountShare extends Share {
  /** `api_key`: asked for by a key, whose link only that key reads; `console`: asked here. */
  token_source: 'api_key' | 'console';
  /** The key that asked for it; `console:<user id>` when asked from the console. */
  key_id: string;
  /** The shared asset's media type and size in bytes. */
  media_type: string;
  bytes: number;
}

/** A share in `GET /console/api/shares`: naming the key that asked for it. */
export type OwnerShare = AccountShare & KeyNames;

/** `GET /console/api/shares`: the account's shares, newest first, a page at a time. */
export interface OwnerShareList {
  object: 'list';
  data: OwnerShare[];
  has_more: boolean;
  /** The last share's id, to pass as `after` for the next page; `null` on the last page. */
  next_cursor: string | null;
}

/**
 * `POST /console/api/shares`: a share of an uploaded file or of a task's output, exactly one of
 * the two (answered as the `Share`, 202 `pending_review`).
 */
export type ShareTargetBody = { asset_id: string } | { task_id: string };
