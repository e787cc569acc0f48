import type {
  OnlineTopUpBody,
  PaymentOrderList,
  StartedTopUp,
  TopUpList,
} from '@tollgate/protocol';
import { request } from './api.js';

/** The console's online top-up calls (member) and the operators' order list (docs/payments.md). */
export const paymentApi = {
  orders: () => request<TopUpList>('GET', '/topups'),
  start: (amount: number) =>
    request<StartedTopUp>('POST', '/topups', { body: { amount } satisfies OnlineTopUpBody }),
  allOrders: (flaggedOnly: boolean) =>
    request<PaymentOrderList>('GET', `/admin/payment-orders${flaggedOnly ? '?flagged=true' : ''}`),
};
