/**
 * Where a share is in its review (docs/shares.md, "States"): `pending_review` until an operator
 * approves or rejects it; `approved` serves at its public URL; `rejected` and `revoked` are final.
 */
export type ShareState = 'pending_review' | 'approved' | 'rejected' | 'revoked';

/**
 * A public share as its owner (the key that asked for it) reads it: `POST /v1/shares` (202),
 * `GET /v1/shares/{id}`, `GET /v1/shares`, `DELETE /v1/shares/{id}`. docs/shares.md.
 */
export interface Share {
  object: 'share';
  /** `share_…`. */
  id: string;
  state: ShareState;
  /** The task named when the share was asked for by `task_id`; else `null`. */
  task_id: string | null;
  /** The asset it serves. */
  asset_id: string;
  /** ISO 8601. */
  created_at: string;
  /** ISO 8601 time of the latest decision (approve, reject, revoke); `null` before any. */
  decided_at: string | null;
  /** The reason given with the latest decision; `null` for none (an owner's withdrawal). */
  reason: string | null;
  /**
   * `/s/{token}` on the gateway's origin, readable with no key, while the share serves
   * (approved, its asset not deleted); else `null`. `null` also in a replayed creation.
   */
  public_url: string | null;
}

/** `GET /v1/shares`: the key's shares, newest first. */
export interface ShareList {
  object: 'list';
  data: Share[];
  has_more: boolean;
  next_cursor: string | null;
}
