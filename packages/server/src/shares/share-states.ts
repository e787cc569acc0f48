import type { ShareEventTable, ShareState } from '../store/schema.js';

export type ShareAction = ShareEventTable['action'];

/**
 * Every move a share may make, listed once (docs/shares.md has the diagram). The store's
 * `transition` refuses any other, and every move is a compare-and-set on the state its caller
 * read: an owner and an operator may decide on one share at the same moment, and neither may
 * overwrite a state it did not see.
 *
 * - pending_review → approved: an operator approved it; the public URL starts serving.
 * - pending_review → rejected: an operator rejected it (a reason is required).
 * - pending_review → revoked: the owner withdrew it before review (or an operator revoked it).
 * - approved → revoked: the owner or an operator revoked it; the public URL serves 404 from then on.
 *
 * `rejected` and `revoked` are final: a new share is a new request with a new token.
 */
export const SHARE_MOVES: Readonly<Record<ShareState, readonly ShareState[]>> = {
  pending_review: ['approved', 'rejected', 'revoked'],
  approved: ['revoked'],
  rejected: [],
  revoked: [],
};

/** The state each decision leads to. */
export const DECISION_TARGET: Readonly<Record<Exclude<ShareAction, 'requested'>, ShareState>> = {
  approved: 'approved',
  rejected: 'rejected',
  revoked: 'revoked',
};

export function canMove(from: ShareState, to: ShareState): boolean {
  return SHARE_MOVES[from].includes(to);
}

/** A move the table does not list, asked of the store: a bug in the caller, never a race. */
export class ForbiddenShareMove extends Error {
  override readonly name = 'ForbiddenShareMove';
  constructor(from: ShareState, to: ShareState) {
    super(`a share never moves from ${from} to ${to} (shares/share-states.ts)`);
  }
}
