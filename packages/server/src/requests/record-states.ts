import type { RequestStatus } from '../store/schema.js';

/**
 * Every move a request record's status may make, listed once (docs/requests.md has the
 * diagram). The store's `transition` (request-store.ts) refuses any other, and every move it
 * makes is a compare-and-set on the state its caller expected: a finish, a settle, an operator
 * and the sweeper can all reach one record, and none may overwrite a state it did not see.
 *
 * - processing → succeeded / awaiting_funds: a confirmed, priced result; captured, or more than
 *   was available (hold kept for a settle).
 * - processing → failed: a confirmed failure; the hold is released.
 * - processing → submission_unknown: the outcome was not confirmed (finish), or the instance
 *   running it is presumed dead (the sweeper); the hold is kept.
 * - awaiting_funds → succeeded: the caller settled it.
 * - submission_unknown → succeeded / awaiting_funds / failed: a late finish of a record the
 *   sweeper had given up on records its confirmed outcome, with its money movement on the hold
 *   that is still open: the reconciliation an operator would otherwise do by hand.
 * - submission_unknown → resolved: an operator captured or released the hold.
 * - processing → accepted: the claim created a task in its own transaction (no one else ever
 *   sees the record `processing`); `accepted` never moves again, the task carries the rest of
 *   the story and its hold (tasks/task-states.ts). Work done entirely inside the claim's
 *   transaction (a task's settle) moves processing → succeeded the same way.
 *
 * A move from a state to itself is a guarded write that keeps the state: `processing` (the
 * heartbeat of a long stream), `awaiting_funds` (a stream's transcript ends with what its caller
 * was told), `submission_unknown` (a late unconfirmed ending replaces the sweeper's guess with its
 * own account).
 */
export const RECORD_MOVES: Readonly<Record<RequestStatus, readonly RequestStatus[]>> = {
  processing: [
    'processing',
    'succeeded',
    'awaiting_funds',
    'failed',
    'submission_unknown',
    'accepted',
  ],
  awaiting_funds: ['awaiting_funds', 'succeeded'],
  submission_unknown: ['submission_unknown', 'succeeded', 'awaiting_funds', 'failed', 'resolved'],
  succeeded: [],
  failed: [],
  resolved: [],
  accepted: [],
};

export function canMove(from: RequestStatus, to: RequestStatus): boolean {
  return RECORD_MOVES[from].includes(to);
}

/** A move the table does not list: a bug in the caller, never a race, so it throws. */
export class RecordMoveNotAllowed extends Error {
  constructor(
    readonly from: RequestStatus,
    readonly to: RequestStatus,
  ) {
    super(`a request record never moves from ${from} to ${to} (requests/record-states.ts)`);
    this.name = 'RecordMoveNotAllowed';
  }
}

export function assertMove(from: RequestStatus, to: RequestStatus): void {
  if (!canMove(from, to)) throw new RecordMoveNotAllowed(from, to);
}
