/*
 * A member's wallet in the console (docs/console.md, "Wallet"): the account's money, what holds
 * part of it and until when, and every journal entry with the balance after it. Amounts are
 * integer micro-yuan (CNY_MICRO), safe integers.
 */

import type { ApiKey } from './keys.js';
import type { Currency, MicroYuan } from './money.js';
import type { RequestStatus } from './records.js';
import type { TaskBillingState, TaskStatus } from './tasks.js';
import type { StatementMovementKind } from './usage.js';

/**
 * Every kind of journal entry: the balance movements of a statement, and `hold` (money
 * reserved: `held` rises) and `release` (a hold given back whole: `held` falls), which never
 * move the balance.
 */
export type WalletMovementKind = StatementMovementKind | 'hold' | 'release';

/** Which key an entry or a hold came from: its name (`null` when unnamed) and `tgk_…` hint. */
export type WalletKey = Pick<ApiKey, 'name' | 'hint'>;

/** What holds the money: a request in flight (or unresolved), or a task. */
export type WalletHoldKind = WalletHold['kind'];

/**
 * What ends an open hold (charged or released):
 * - `request_finishes`: the request is running; when it ends its usage is charged and the rest
 *   released (all of it released when it fails);
 * - `request_settled`: its result costs more than was available; settling it after a top-up
 *   charges it (the console's "awaiting funds", or `POST /v1/requests/{id}/settle`);
 * - `request_reconciled`: its outcome is unconfirmed; the gateway asks the upstream, or an
 *   operator resolves it, then it is charged or released;
 * - `task_finishes`: the task is queued or running; once it ends it is priced and awaits
 *   settlement (released when it fails);
 * - `task_settled`: priced; settling it charges it, and it is released unsettled at `until`;
 * - `task_reconciled`: the task's submission is unconfirmed; an operator resolves it.
 */
export type WalletHoldRelease =
  | 'request_finishes'
  | 'request_settled'
  | 'request_reconciled'
  | 'task_finishes'
  | 'task_settled'
  | 'task_reconciled';

/** What every open hold tells. */
interface WalletHoldFacts {
  /** `hold_…`. */
  id: string;
  /** The request that took the hold (a task's creation request for a task). */
  request_id: string;
  model: string | null;
  /** The key that made the request or task. */
  key: WalletKey | null;
  /** Micro-yuan reserved. */
  amount: MicroYuan;
  /** ISO 8601: when the money was reserved. */
  since: string;
  released_by: WalletHoldRelease;
  /** ISO 8601: when it is released at the latest, when that is known (a task's settlement window). */
  until: string | null;
}

/** An open hold of a request (running, awaiting funds, or unconfirmed). */
export interface WalletRequestHold extends WalletHoldFacts {
  kind: 'request';
  task_id: null;
  status: RequestStatus;
  billing_state: null;
}

/** An open hold of a task (reserved, or priced and awaiting settlement). */
export interface WalletTaskHold extends WalletHoldFacts {
  kind: 'task';
  task_id: string;
  status: TaskStatus;
  billing_state: TaskBillingState;
}

/** One open hold, explained: what holds it (`kind`), since when, and what ends it. */
export type WalletHold = WalletRequestHold | WalletTaskHold;

/** `GET /console/api/wallet`: the account's money and its open holds. */
export interface Wallet {
  object: 'wallet';
  account_id: string;
  currency: Currency;
  /** Everything credited minus everything charged and refunded. */
  balance: MicroYuan;
  /** The part of `balance` the open holds reserve: the sum of every open hold. */
  held: MicroYuan;
  /** `balance - held`. */
  available: MicroYuan;
  /** Refunded but not yet taken back (docs/payments.md, "Refunds"). */
  owed: MicroYuan;
  /** The open holds, oldest first (at most 200: see `holds_truncated`). */
  holds: WalletHold[];
  /** True when there are more open holds than `holds` lists. */
  holds_truncated: boolean;
}

/** One journal entry of the wallet, with the balance and the held amount after it. */
export interface WalletMovement {
  /** The journal entry (`jrn_…`). */
  id: string;
  /** ISO 8601, when it was journalled. */
  time: string;
  kind: WalletMovementKind;
  /** Signed micro-yuan the balance moved: positive credits, negative charges (0: a hold or release). */
  amount: number;
  /** Signed micro-yuan `held` moved: a hold reserves (+), a capture or release gives back (−). */
  held_change: number;
  /** The balance after this entry: the opening balance plus every amount up to this one. */
  balance: MicroYuan;
  /** The held amount after this entry. */
  held: MicroYuan;
  /** The journal's reason, as written (`usage of req_…`, `top-up REF`, …). */
  description: string;
  /** The top-up reference (`redemption:rdm_…` for a code); else `null`. */
  reference: string | null;
  /** The request the entry belongs to (a task's creation request for a task); else `null`. */
  request_id: string | null;
  /** The task the entry belongs to; else `null`. */
  task_id: string | null;
  /** The model of the hold's price version; `null` for a credit or a refund. */
  model: string | null;
  /** `<model>@<version>` the hold was priced at; `null` for a credit or a refund. */
  price_version: string | null;
  /** The key of the request or task; `null` for a credit or a refund. */
  key: WalletKey | null;
}

/**
 * `GET /console/api/wallet/movements`: one page of a period's journal entries in journal order
 * (by time; within one millisecond credits first, then by id), each with the running balance.
 */
export interface WalletMovementList {
  object: 'list';
  currency: Currency;
  /** First day, `YYYY-MM-DD` (UTC), included. */
  from: string;
  /** Last day, `YYYY-MM-DD` (UTC), included. */
  to: string;
  /** ISO 8601: `from` at 00:00 UTC. */
  period_start: string;
  /** ISO 8601: the day after `to` at 00:00 UTC. */
  period_end: string;
  /** False while the period has not ended: entries may still be added to it. */
  complete: boolean;
  /** The balance at `period_start`. */
  opening_balance: MicroYuan;
  /** The held amount at `period_start`. */
  opening_held: MicroYuan;
  data: WalletMovement[];
  has_more: boolean;
  /** Pass as `cursor` (with the same `from` and `to`) for the next page; `null` on the last. */
  next_cursor: string | null;
}
