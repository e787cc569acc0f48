import { call } from './api.js';

/** An online top-up order (docs/payments.md, "Order states"); amounts in micro-yuan. */
export interface PaymentOrder {
  object: 'payment_order';
  id: string;
  account_id: string;
  provider: string;
  amount: number;
  currency: string;
  state:
    | 'created'
    | 'paid'
    | 'expired'
    | 'failed'
    | 'amount_mismatch'
    | 'balance_limit'
    | 'refunded_partially'
    | 'refunded';
  /** Present while the order can still be paid. */
  checkout_url: string | null;
  refunded_amount: number;
  refund_owed: number;
  flag: string | null;
  created_at: string;
  updated_at: string;
}

export interface PaymentStatus {
  enabled: boolean;
  provider: string | null;
  currency: string | null;
}

/** The console's online top-up calls (member) and the operators' order list. */
export const paymentApi = {
  orders: () => call<{ data: PaymentOrder[]; payments: PaymentStatus }>('GET', '/topups'),
  start: (amount: number) =>
    call<{ order: PaymentOrder; checkout_url: string }>('POST', '/topups', { amount }),
  allOrders: (flaggedOnly: boolean) =>
    call<{ data: PaymentOrder[] }>(
      'GET',
      `/admin/payment-orders${flaggedOnly ? '?flagged=true' : ''}`,
    ),
};

/** Micro-yuan in one fen: online payments are whole fen. */
export const MICRO_YUAN_PER_FEN = 10_000;

/**
 * Yuan typed by a member as exact micro-yuan, by string arithmetic (no floating point): at most
 * two decimals (a fen), at least 0.01. `null` for anything else.
 */
export function parseYuanToFen(text: string): number | null {
  const match = /^(\d{1,8})(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (match === null) return null;
  const micro =
    Number(match[1]) * 1_000_000 + Number((match[2] ?? '').padEnd(2, '0')) * MICRO_YUAN_PER_FEN;
  return micro > 0 ? micro : null;
}
