/*
 * The operator's dashboard, global request log and redemption code batches (docs/console.md,
 * "Dashboard", "Request log", "Redemption codes"): console-only views, never shown to callers.
 * Amounts are integer micro-yuan (CNY_MICRO), safe integers.
 */

import type { Currency, MicroYuan } from './money.js';
import type { RequestStatus } from './records.js';
import type { UsageRow } from './usage.js';

/**
 * What a group of captures (a day, an account, a model, a channel) brought in, and what its
 * channels charged the operator for it where they have a `cost` (docs/routing.md, "Channel
 * cost").
 */
export interface DashboardFigures {
  /** Captures (a capture of 0 included): charged requests and tasks. */
  requests: number;
  /** Micro-yuan captured: what the accounts were charged (the journal's `capture` entries). */
  revenue: MicroYuan;
  /**
   * What the serving channels charge the operator for the captures that recorded a channel cost;
   * `null` when none did (no `cost` configured on their channels, tasks, purged records).
   */
  channel_cost: MicroYuan | null;
  /**
   * `revenue` of those same captures minus `channel_cost`: the margin where the cost is known;
   * `null` with `channel_cost`. May be negative (a channel dearer than the model's price).
   */
  margin: number | null;
  /** Revenue of the captures that recorded no channel cost (not in `margin`). */
  revenue_without_cost: MicroYuan;
}

/** One UTC day of the period. */
export interface DashboardDay extends DashboardFigures {
  /** `YYYY-MM-DD`, a UTC day. */
  date: string;
}

/** One account among the top accounts of the period (by revenue). */
export interface DashboardAccount extends DashboardFigures {
  account_id: string;
  email: string;
}

/** One model of the period (the model of the capture's price version). */
export interface DashboardModel extends DashboardFigures {
  model: string;
}

/** One channel of the period. */
export interface DashboardChannel extends DashboardFigures {
  /**
   * The channel that served the request (docs/routing.md); `null` for captures whose record
   * names none: tasks, and records purged after their retention.
   */
  channel: string | null;
  /** Whether the channel, as configured now, has `cost` prices. */
  cost_configured: boolean;
}

/**
 * `GET /console/api/admin/dashboard?from&to`: a period of UTC days (at most 366) read from the
 * journal's captures, with the money held now and the resolution queue.
 */
export interface OperatorDashboard {
  object: 'operator.dashboard';
  currency: Currency;
  /** First day, `YYYY-MM-DD` (UTC), included. */
  from: string;
  /** Last day, `YYYY-MM-DD` (UTC), included. */
  to: string;
  totals: DashboardFigures;
  /** Days with at least one capture, oldest first. */
  days: DashboardDay[];
  /** Revenue per day and model (the chart's bars), by date then model. */
  by_day_model: UsageRow[];
  /** The accounts charged most in the period, highest revenue first (at most 10). */
  top_accounts: DashboardAccount[];
  /** How many accounts were charged in the period. */
  accounts_charged: number;
  /** Every model charged in the period, highest revenue first. */
  models: DashboardModel[];
  /** Every channel that served a capture, highest revenue first; the captures naming none last. */
  channels: DashboardChannel[];
  /** Money held now by open holds, every account (not limited to the period). */
  open_holds: {
    /** Micro-yuan held: the sum of every account's `held` (= its open holds, the ledger check). */
    amount: MicroYuan;
    /** Accounts holding money now. */
    accounts: number;
  };
  /** The resolution queue now: `submission_unknown` records and tasks with open holds. */
  unresolved: {
    count: number;
    held: MicroYuan;
    /** ISO 8601; `null` when the queue is empty. */
    oldest_created_at: string | null;
  };
}

/** One record of the global request log. */
export interface OperatorRequestLogRow {
  id: string;
  /** ISO 8601. */
  created_at: string;
  account_id: string;
  /** The account's email (`null` only when the account is gone). */
  account_email: string | null;
  key_id: string;
  /** The key's name; `null` when it has none (or is gone): `key_hint` then names it. */
  key_name: string | null;
  /** The last characters of the key, as the keys page shows them. */
  key_hint: string | null;
  model: string | null;
  status: RequestStatus;
  http_status: number | null;
  /** The bill (micro-yuan), whether captured yet or not; `null` when there is none. */
  amount: MicroYuan | null;
  /** Whether `amount` was captured. */
  captured: boolean;
}

/** `GET /console/api/admin/requests`: newest first, keyset pages. */
export interface OperatorRequestLog {
  object: 'list';
  data: OperatorRequestLogRow[];
  has_more: boolean;
  /** Pass as `cursor` (with the same filters) for the next page; `null` on the last page. */
  next_cursor: string | null;
  /** The period read: ISO 8601, `from` included, `to` excluded. */
  from: string;
  to: string;
}

/**
 * A batch of redemption codes: one creation call (a single code is a batch of one). Codes made
 * before batches existed are grouped by their creation time, value and expiry.
 */
export interface RedemptionBatch {
  object: 'redemption_batch';
  id: string;
  /** Each code's value. */
  amount: MicroYuan;
  /** ISO 8601. */
  created_at: string;
  /** ISO 8601; `null`: the codes never expire. */
  expires_at: string | null;
  /** How many codes the batch made. */
  codes: number;
  redeemed: number;
  /** Micro-yuan credited by its redeemed codes. */
  redeemed_amount: MicroYuan;
  /** Codes voided (never redeemed after). */
  voided: number;
  /** Codes neither redeemed nor voided (some may have expired: see `expires_at`). */
  unredeemed: number;
  /** ISO 8601 of the first void; `null` when never voided. */
  voided_at: string | null;
}

/** `GET /console/api/admin/code-batches`: newest first. */
export interface RedemptionBatchList {
  object: 'list';
  data: RedemptionBatch[];
  has_more: boolean;
  /** The last batch's id, to pass as `after`; `null` on the last page. */
  next_cursor: string | null;
}

/** `POST /console/api/admin/code-batches/{id}/void`: the batch after, and what this call voided. */
export interface RedemptionBatchVoided {
  batch: RedemptionBatch;
  /** Codes this call voided (0 when repeated: the call is idempotent). */
  voided_now: number;
}
