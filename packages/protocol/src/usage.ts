/*
 * What was spent: the caller's own request list, the account's usage per day and model, and the
 * operator's account statement (docs/usage.md, docs/requests.md "Listing"). Amounts are integer
 * micro-yuan (CNY_MICRO), safe integers.
 */

import type { Currency, MicroYuan } from './money.js';
import type { RequestRecord } from './records.js';

/**
 * One record in `GET /v1/requests` (the list): the record exactly as `GET /v1/requests/{id}`
 * shows it, without `result` — a result may be large (a batch of vectors, a long completion);
 * read the record by its id for it.
 */
export type RequestSummary = Omit<RequestRecord, 'result'>;

/** `GET /v1/requests` without `idempotency_key`: the calling key's own records, newest first. */
export interface RequestList {
  object: 'list';
  data: RequestSummary[];
  /** True when more records match after the last one of `data`. */
  has_more: boolean;
  /** Pass as `cursor` (with the same filters) for the next page; `null` when `has_more` is false. */
  next_cursor: string | null;
}

/** Spend of one UTC day on one model. */
export interface UsageRow {
  /** `YYYY-MM-DD`, a UTC day. */
  date: string;
  /** The public model id the prices belonged to. */
  model: string;
  /** How many requests and tasks were charged (one per capture, a capture of 0 included). */
  requests: number;
  /** Micro-yuan captured. */
  amount: MicroYuan;
}

/** Spend on one model over the whole range. */
export interface UsageModelTotal {
  model: string;
  requests: number;
  amount: MicroYuan;
}

/** `GET /v1/account/usage`: what the account was charged, per UTC day and model, from the journal. */
export interface AccountUsage {
  object: 'account.usage';
  account_id: string;
  currency: Currency;
  /** First day of the range, `YYYY-MM-DD` (UTC), included. */
  from: string;
  /** Last day of the range, `YYYY-MM-DD` (UTC), included. */
  to: string;
  /** Days and models with at least one charge, by date then model. */
  data: UsageRow[];
  totals: {
    requests: number;
    amount: MicroYuan;
    /** By model, by model id. */
    by_model: UsageModelTotal[];
  };
}

/**
 * A journal entry that moved the balance: credits (`topup`, `redemption`), charges (`capture`)
 * and a payment provider's refunds taken back (`refund`, docs/payments.md "Refunds"); holds and
 * releases move only `held`, never listed.
 */
export type StatementMovementKind = 'topup' | 'redemption' | 'capture' | 'refund';

/** One movement of an account statement. */
export interface StatementMovement {
  /** The journal entry (`jrn_…`). */
  id: string;
  /** ISO 8601, when it was journalled. */
  time: string;
  kind: StatementMovementKind;
  /** Signed micro-yuan: positive credits the balance, negative charges it (0: charged nothing). */
  amount: number;
  /** The balance after this movement: the opening balance plus every amount up to this one. */
  balance: MicroYuan;
  /** The journal's reason (`top-up REF`, `usage of req_…`, `settle image task …`, `operator: …`). */
  description: string;
  /** The top-up reference (`redemption:rdm_…` for a code); `null` for a capture or a refund. */
  reference: string | null;
  /** The request whose hold was captured (a task's creation request for a task); else `null`. */
  request_id: string | null;
  /** The task whose hold was captured; else `null`. */
  task_id: string | null;
  /** The model of the price version the capture used; `null` for a credit or a refund. */
  model: string | null;
  /** `<model>@<version>` the capture's hold was priced at; `null` for a credit or a refund. */
  price_version: string | null;
}

/**
 * `GET /admin/v1/accounts/{id}/statement` and `tollgate statement`: every balance movement of a
 * period. `closing_balance = opening_balance + credits - debits`, and each movement's `balance`
 * is the running balance, so the last one equals `closing_balance`.
 */
export interface AccountStatement {
  object: 'account.statement';
  account_id: string;
  email: string;
  currency: Currency;
  /** First day, `YYYY-MM-DD` (UTC), included. */
  from: string;
  /** Last day, `YYYY-MM-DD` (UTC), included. */
  to: string;
  /** ISO 8601: `from` at 00:00 UTC, the first instant of the period. */
  period_start: string;
  /** ISO 8601: the day after `to` at 00:00 UTC, the first instant after the period. */
  period_end: string;
  /** False while the period has not ended yet: movements may still be added to it. */
  complete: boolean;
  /** The balance at `period_start`: every movement before it. */
  opening_balance: MicroYuan;
  /** In journal order: by time; within one millisecond credits first, then by id. */
  movements: StatementMovement[];
  totals: {
    /** How many movements. */
    movements: number;
    /** The sum of the positive amounts. */
    credits: MicroYuan;
    /** The sum of the negative amounts, as a positive number. */
    debits: MicroYuan;
  };
  /** The balance at `period_end` (or as read, while the period is not complete). */
  closing_balance: MicroYuan;
}
