import type { Budget } from './accounts.js';

/** `personal` keys use every caller route; `service` keys call models only (docs/keys.md). */
export type KeyKind = 'personal' | 'service';

/**
 * `required`: every business POST sends its own `Idempotency-Key` (the spec's rule, the default);
 * `optional`: one without it gets a key from the gateway, answered in the `Idempotency-Key`
 * header (docs/keys.md, "Keys for tools that cannot send an idempotency key").
 */
export type KeyIdempotency = 'required' | 'optional';

/**
 * An API key as the admin API and the console show it (`POST`/`GET /admin/v1/accounts/{id}/keys`,
 * `/console/api/keys`): never its plaintext, which only the answer that created it carries
 * (`NewApiKey`).
 */
export interface ApiKey {
  object: 'api_key';
  /** `key_…`. */
  id: string;
  account_id: string;
  kind: KeyKind;
  name: string | null;
  /** `tgk_…` and the key's last four characters. */
  hint: string;
  /** The model allowlist; `null`: every configured model. */
  models: string[] | null;
  /** ISO 8601, or `null`. */
  expires_at: string | null;
  disabled_at: string | null;
  last_used_at: string | null;
  created_at: string;
  /** The key that replaced this one by rotation, or `null`. */
  replaced_by: string | null;
  /** The key's own spend limit (on top of its account's), or `null`. */
  budget: Budget | null;
  /** CIDR blocks the key may be used from, or `null` for everywhere (docs/security.md). */
  allowed_ips: string[] | null;
  /** Whether its business POSTs must send `Idempotency-Key`. */
  idempotency: KeyIdempotency;
}

/** A created or rotated key: the plaintext `key` is in this answer only. */
export type NewApiKey = ApiKey & { key: string };
