import { request } from './api.js';
import type { AccountEmail, List, PaymentOrder, StartedTopUp, TopUpList } from './console-types.js';

/** The console's online top-up calls (member) and the operators' order list (docs/payments.md). */
export const paymentApi = {
  orders: () => request<TopUpList>('GET', '/topups'),
  start: (amount: number) => request<StartedTopUp>('POST', '/topups', { body: { amount } }),
  allOrders: (flaggedOnly: boolean) =>
    request<List<PaymentOrder & AccountEmail>>(
      'GET',
      `/admin/payment-orders${flaggedOnly ? '?flagged=true' : ''}`,
    ),
};
