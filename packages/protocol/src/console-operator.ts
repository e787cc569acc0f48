/*
 * The operator pages' calls (docs/console.md, "Operator pages and their API";
 * `/console/api/admin/...`, an operator's session): accounts, keys, channels, the share review
 * queue, the resolution queue, and the bodies those pages send. Each body is the operator
 * action's input, the same the admin API takes (docs/admin.md, "Input rules"). Rows of the
 * console's answers name their account and key (console-names.ts). Amounts are integer
 * micro-yuan (CNY_MICRO), safe integers; times ISO 8601 strings.
 */

import type { Account, BudgetWindow } from './accounts.js';
import type { AccountEmail, KeyNames, TaskNames } from './console-names.js';
import type { MicroYuan } from './money.js';
import type { OperatorRequestRecord, OperatorShare, OperatorTask } from './operator.js';

/**
 * `GET /console/api/admin/accounts?q&id_prefix&limit&after` (and `GET /admin/v1/accounts`):
 * accounts, newest first, a page at a time.
 */
export interface AccountPage {
  object: 'list';
  data: Account[];
  has_more: boolean;
  /** The last account's id, to pass as `after` for the next page; `null` on the last page. */
  next_cursor: string | null;
}

/** `POST /console/api/admin/accounts` (201, the `Account`). */
export interface CreateAccountBody {
  email: string;
}

/**
 * `POST /console/api/admin/accounts/{id}/topups`: money credited by hand, once per `reference`
 * (the same reference again is a replay; with another amount 409 `IDEMPOTENCY_CONFLICT`).
 */
export interface ManualTopUpBody {
  /** Micro-yuan, 1 to 10^13. */
  amount: MicroYuan;
  reference: string;
}

/** The answer of a manual top-up: the account after it. */
export type ToppedUpAccount = Account & {
  /** True when `reference` was credited before: nothing moved this time. */
  replayed: boolean;
};

/**
 * `PUT /console/api/admin/accounts/{id}/budget` and `…/keys/{id}/budget`: a spend limit,
 * answered as the account or the key with its `budget`.
 */
export interface BudgetBody {
  /** Micro-yuan, 0 to 10^15. */
  limit: MicroYuan;
  window: BudgetWindow;
}

/** `PATCH /console/api/admin/keys/{id}`: the key's source addresses (docs/security.md). */
export interface KeyAllowedIpsBody {
  /** 1 to 100 CIDR blocks (a bare address is one); `null`: every address again. */
  allowed_ips: string[] | null;
}

/** A channel's circuit breaker in the answering instance (docs/routing.md). */
export type ChannelBreaker = 'closed' | 'open' | 'half_open';

/** A channel and its state in the answering instance (docs/routing.md, "Operators"). */
export interface Channel {
  id: string;
  /** The public model id it serves. */
  model: string;
  upstream: string;
  /** The model id the upstream is asked for. */
  upstream_model: string;
  weight: number;
  /** The highest priority serves first; within it, channels by `weight`. */
  priority: number;
  /** Disabled by an operator (every instance skips it). */
  disabled: boolean;
  breaker: ChannelBreaker;
  consecutive_failures: number;
  /** When the breaker's cool-down ends (a trial request may go through); `null`: none. */
  cooldown_ends_at: string | null;
  /** Requests this instance is sending on it now. */
  in_flight: number;
  /** `null`: not limited. */
  max_concurrency: number | null;
  requests_per_minute: number | null;
}

/** `GET /console/api/admin/channels`: every channel, unpaged. */
export interface ChannelList {
  object: 'list';
  data: Channel[];
}

/** `POST /console/api/admin/channels/{id}/disable` or `…/enable` (answered as the `Channel`). */
export interface ChannelSwitchBody {
  /** At most 500 characters, journalled. */
  reason?: string;
}

/**
 * `POST /console/api/admin/shares/{id}/approve` or `…/reject` (answered as the `OperatorShare`):
 * the reason is required to reject; 1 to 1,000 characters, shown to the share's owner.
 */
export interface ShareDecisionBody {
  reason?: string;
}

/** A share in the review queue: naming its account, its key, and its task's kind and model. */
export type ReviewShare = OperatorShare & AccountEmail & KeyNames & TaskNames;

/** `GET /console/api/admin/shares?state&limit&after`: shares, oldest first (the review queue). */
export interface ReviewShareList {
  object: 'list';
  data: ReviewShare[];
  has_more: boolean;
  /** The last share's id, to pass as `after` for the next page; `null` on the last page. */
  next_cursor: string | null;
}

/** An operator's view of a record, naming its account and key. */
export type NamedOperatorRecord = OperatorRequestRecord & AccountEmail & KeyNames;

/**
 * `GET /console/api/admin/requests/unresolved` (the oldest 100 `submission_unknown` records) and
 * `GET /console/api/admin/requests/usage-beyond-cap` (the newest 100 not yet reviewed): unpaged.
 */
export interface NamedOperatorRecordList {
  object: 'list';
  data: NamedOperatorRecord[];
}

/** An operator's view of a task, naming its account and key. */
export type NamedOperatorTask = OperatorTask & AccountEmail & KeyNames;

/** `GET /console/api/admin/tasks?status`: tasks in a status, newest first, at most 100, unpaged. */
export interface NamedOperatorTaskList {
  object: 'list';
  data: NamedOperatorTask[];
}

/** One side of the resolution queue: how many, the money they hold, and the oldest. */
export interface UnresolvedTotals {
  count: number;
  /** Micro-yuan held by their open holds. */
  held: MicroYuan;
  /** When the oldest was created; `null` when there is none. */
  oldest_created_at: string | null;
  /** Its age in whole seconds at the time of reading; `null` when there is none. */
  oldest_age_seconds: number | null;
}

/**
 * `GET /console/api/admin/unresolved` (and `GET /admin/v1/unresolved`): `submission_unknown`
 * records and tasks with open holds. The totals count all; each `data` lists at most its
 * listing's limit (docs/requests.md, "Reconciled by look-up").
 */
export interface UnresolvedQueue {
  object: 'unresolved';
  /** Records and tasks together: what an operator (or an alert) watches. */
  total: UnresolvedTotals;
  requests: UnresolvedTotals & { data: OperatorRequestRecord[] };
  tasks: UnresolvedTotals & { data: OperatorTask[] };
}

/**
 * `POST /console/api/admin/requests/{id}/resolve` of a `submission_unknown` record (answered as
 * the record, `resolved`): capture a positive amount (at most 10^13 micro-yuan), or release the
 * whole hold (no amount).
 */
export type ResolveRecordBody =
  { action: 'capture'; amount: MicroYuan; reason: string } | { action: 'release'; reason: string };

/**
 * `POST /console/api/admin/tasks/{id}/resolve` of a `submission_unknown` task (answered as the
 * `OperatorTask`): release its hold, or attach the task the upstream has (an upstream that
 * answers later only; docs/tasks.md). `reason`: 1 to 1,000 characters.
 */
export type ResolveTaskBody =
  | { action: 'release'; reason: string }
  | { action: 'attach'; upstream_task_id: string; reason: string };

/** `POST /console/api/admin/requests/{id}/review-usage`: usage beyond the cap reviewed. */
export interface ReviewUsageBody {
  reason: string;
}

/** `POST /console/api/admin/redemption-codes` (201): one code, shown this once. */
export interface RedemptionCodeBody {
  /** The code's value, micro-yuan, 1 to 10^13. */
  amount: MicroYuan;
  /** ISO 8601 (or epoch milliseconds), in the future; absent: the code never expires. */
  expires_at?: string | number;
}

/**
 * `POST /console/api/admin/redemption-codes/batches` with `Accept: text/csv`: a batch of codes as
 * a CSV download (`id,code,amount,expires_at`), each code shown this once.
 */
export interface RedemptionBatchBody {
  /** Each code's value, micro-yuan, 1 to 10^13. */
  amount: MicroYuan;
  /** 1 to 1000. */
  count: number;
  /** ISO 8601 (or epoch milliseconds), in the future; absent: the codes never expire. */
  expires_at?: string | number;
}
