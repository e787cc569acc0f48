/*
 * Online top-up (docs/payments.md): a member's checkout orders and whether payment is set up,
 * and the operators' list of every order with its refunds and flags. Console calls only
 * (`/console/api/topups`, `/console/api/admin/payment-orders`). Amounts are integer micro-yuan
 * (CNY_MICRO), safe integers; times ISO 8601 strings.
 */

import type { AccountEmail } from './console-names.js';
import type { MicroYuan } from './money.js';

/**
 * Where an order is (docs/payments.md, "Order states"): `created` → `paid` | `expired` | `failed`
 * | `amount_mismatch` | `balance_limit`; `expired`/`failed` → `paid` (a late payment); `paid` →
 * `refunded_partially` → `refunded`. `amount_mismatch` and `balance_limit` were paid but not
 * credited: the operator's to settle.
 */
export type PaymentOrderState =
  | 'created'
  | 'paid'
  | 'expired'
  | 'failed'
  | 'amount_mismatch'
  | 'balance_limit'
  | 'refunded_partially'
  | 'refunded';

/** One online top-up order. */
export interface PaymentOrder {
  object: 'payment_order';
  id: string;
  account_id: string;
  /** The payment provider's name (`stripe`). */
  provider: string;
  /** Micro-yuan, a whole number of fen. */
  amount: MicroYuan;
  /** The provider's currency code (`cny`). */
  currency: string;
  state: PaymentOrderState;
  /** Where the browser pays it, while it can still be paid (`created`); else `null`. */
  checkout_url: string | null;
  /** Micro-yuan the provider refunded so far. */
  refunded_amount: MicroYuan;
  /**
   * The part of `refunded_amount` that could not be taken back from the balance when each refund
   * came (owed by the account then; the account's `owed` says what is still owed).
   */
  refund_owed: MicroYuan;
  /** Why an operator should look; `null` when nothing is wrong. */
  flag: string | null;
  created_at: string;
  /** The latest change. */
  updated_at: string;
}

/** Whether online top-up is set up: the console shows the top-up button, or says why not. */
export interface PaymentStatus {
  object: 'payment_status';
  enabled: boolean;
  /** The provider's name; `null` when not enabled (so is `currency`). */
  provider: string | null;
  currency: string | null;
}

/** `GET /console/api/topups`: the account's orders, newest first, and whether payment is set up. */
export interface TopUpList {
  object: 'list';
  data: PaymentOrder[];
  payments: PaymentStatus;
}

/** `POST /console/api/topups`: open a checkout. */
export interface OnlineTopUpBody {
  /** Micro-yuan, a whole number of fen (a multiple of 10 000), one fen to 10 million yuan. */
  amount: MicroYuan;
}

/** The answer of `POST /console/api/topups` (201): the order, and where the browser pays it. */
export interface StartedTopUp {
  order: PaymentOrder;
  checkout_url: string;
}

/** An order in the operators' list: naming its account. */
export type NamedPaymentOrder = PaymentOrder & AccountEmail;

/**
 * `GET /console/api/admin/payment-orders`: every account's orders, newest first (`flagged=true`:
 * only those with a `flag`), unpaged.
 */
export interface PaymentOrderList {
  object: 'list';
  data: NamedPaymentOrder[];
}
