import type { OperatorShare, Share } from '@tollgate/protocol';
import type { ShareEventRow, SharedRow } from './share-store.js';
import { publicSharePath } from './share-token.js';

const iso = (time: number | null) => (time === null ? null : new Date(time).toISOString());

/** Whether the public URL serves: approved, and its asset neither deleted nor undelivered. */
export function isServing(row: SharedRow): boolean {
  return (
    row.state === 'approved' && row.asset_deleted_at === null && row.asset_delivered_at !== null
  );
}

/**
 * A share as its owner reads it (docs/shares.md). `public_url` is the token's path only while
 * the share serves; `token` is the owner's token, which only the owner's key can compute
 * (share-token.ts), or null when the caller has none to give (a replayed creation).
 */
export function shareView(row: SharedRow, token: string | null): Share {
  return {
    object: 'share' as const,
    id: row.id,
    state: row.state,
    task_id: row.task_id,
    asset_id: row.asset_id,
    created_at: new Date(row.created_at).toISOString(),
    decided_at: iso(row.decided_at),
    /** The reason given with the latest decision, written by the operator or the owner. */
    reason: row.decision_reason,
    public_url: token !== null && isServing(row) ? publicSharePath(token) : null,
  };
}

export type ShareView = ReturnType<typeof shareView>;

/**
 * A share as an operator reviews it (admin API, CLI): whose it is, what it serves and where an
 * operator can look at it; never its token (the operator cannot compute it, and needs none).
 */
export function operatorShareView(
  row: SharedRow,
  events?: readonly ShareEventRow[],
): OperatorShare {
  const { public_url: _never, ...view } = shareView(row, null);
  return {
    ...view,
    account_id: row.account_id,
    key_id: row.key_id,
    media_type: row.media_type,
    bytes: row.bytes,
    asset_deleted: row.asset_deleted_at !== null,
    serving: isServing(row),
    content_url: `/admin/v1/shares/${row.id}/content`,
    ...(events === undefined
      ? {}
      : {
          events: events.map((event) => ({
            at: new Date(event.at).toISOString(),
            actor: event.actor,
            action: event.action,
            reason: event.reason,
          })),
        }),
  };
}

export type OperatorShareView = ReturnType<typeof operatorShareView>;
