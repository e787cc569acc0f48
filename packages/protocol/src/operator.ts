/*
 * The admin API's and CLI's views (docs/admin.md): what the caller sees, plus whose it is and
 * what only an operator needs. Never shown to callers.
 */

import type { H3Task } from './h3.js';
import type { RequestRecord } from './records.js';
import type { Share } from './shares.js';
import type { Task } from './tasks.js';

/**
 * A request record for an operator (`GET /admin/v1/requests/{id}`, the usage-review list and
 * review). An operator's resolution answers the caller's `RequestRecord`.
 */
export interface OperatorRequestRecord extends RequestRecord {
  /** The key that made the request. */
  key_id: string;
  account_id: string;
  /**
   * The rule recorded when the request ended without a bill: which stream ending or failure,
   * with its detail (`stream dropped (ECONNRESET) after 3 chunk(s): outcome unknown, hold
   * kept`), for resolving a `submission_unknown`. `null` when `bill.pricing_rule` explains it.
   */
  ending_rule: string | null;
  /**
   * The channel that served the request, or the last one tried when it failed (docs/routing.md);
   * `null` when no upstream was tried. Operator-only: channels name the operator's upstreams.
   */
  channel: string | null;
  /** Every channel attempt, in order; empty when no upstream was tried. */
  channel_attempts: ChannelAttempt[];
  /**
   * What the serving channel charges the operator for this request, micro-yuan: its `cost`
   * prices on the usage its upstream reported (docs/routing.md, "Channel cost"). `null` when
   * the channel has no `cost`, or nothing was charged. The caller's bill never depends on it.
   */
  channel_cost: number | null;
}

/**
 * One try of one channel for a request. `not_processed`: the upstream certainly did nothing
 * (the request moved to the next channel); `maybe_processed`: it may have done the work (the
 * request stopped there, `submission_unknown`); `refused`: it refused this request (final).
 */
export interface ChannelAttempt {
  channel: string;
  upstream: string;
  outcome: 'succeeded' | 'not_processed' | 'maybe_processed' | 'refused';
  /** Why it failed (`connect: ECONNREFUSED`, `upstream status 503`); null when it succeeded. */
  detail: string | null;
}

/**
 * Whether the task's submission may have reached the upstream: `pending` (nothing sent),
 * `sending` (it may be on its way: never sent again, only looked up), `accepted` (the upstream
 * gave its id).
 */
export type TaskSubmission = 'pending' | 'sending' | 'accepted';

/** A task for an operator (`GET /admin/v1/tasks`, `GET /admin/v1/tasks/{id}`, its resolution). */
export type OperatorTask = (Task | H3Task) & OperatorTaskFields;

/** What an operator sees beside the caller's view of a task. */
export interface OperatorTaskFields {
  account_id: string;
  /** The creating key: the only key that reads and settles the task. */
  key_id: string;
  /** The configured upstream (by its id) the task runs on. */
  upstream: string;
  /** The upstream's own id for the task, once known; never ours. */
  upstream_task_id: string | null;
  submission: TaskSubmission;
  /** The worker that holds the task's lease, if any (it may have run out). */
  lease_owner: string | null;
  /** ISO 8601 time a worker should next look at it; `null`: nothing to do (final, or awaits an operator). */
  due_at: string | null;
  /** How many times a worker leased it. */
  leases_taken: number;
  /**
   * The latest error message kept with the task, when there is one: also for a task that did
   * not fail (why its submission is unknown).
   */
  note?: string;
}

/** One entry of a share's journal: who asked or decided, and why. */
export interface ShareEvent {
  /** ISO 8601. */
  at: string;
  /** `key:<id>` (the owner) or `operator`. */
  actor: string;
  action: 'requested' | 'approved' | 'rejected' | 'revoked';
  reason: string | null;
}

/**
 * A share as an operator reviews it (`GET /admin/v1/shares[/{id}]`, decisions): whose it is and
 * what it serves; never its token or public URL (the operator cannot compute them).
 */
export interface OperatorShare extends Omit<Share, 'public_url'> {
  account_id: string;
  /** The key that asked for it. */
  key_id: string;
  media_type: string;
  /** Size of the shared content in bytes. */
  bytes: number;
  /** Whether the shared asset was deleted (the share then never serves). */
  asset_deleted: boolean;
  /** Whether the public URL serves now (approved, asset neither deleted nor undelivered). */
  serving: boolean;
  /** `/admin/v1/shares/{id}/content`: where an operator looks at it before deciding. */
  content_url: string;
  /** The share's journal, oldest first; present on a single share's read and decisions, not in lists. */
  events?: ShareEvent[];
}
