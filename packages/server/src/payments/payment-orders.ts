import type { PaymentOrder } from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { PaymentOrderState, PaymentOrderTable, Database } from '../store/schema.js';
import { parseInput, type Unparsed } from '../errors/input-schema.js';
import { parseLimit } from '../util/list-page.js';

/** An order as the console shows it (members: their account's; operators: all). */
export function paymentOrderView(row: PaymentOrderTable): PaymentOrder {
  return {
    object: 'payment_order',
    id: row.id,
    account_id: row.account_id,
    provider: row.provider,
    amount: row.amount,
    currency: row.currency,
    state: row.state,
    // A link that can no longer be paid is not shown as one.
    checkout_url: row.state === 'created' ? row.checkout_url : null,
    refunded_amount: row.refunded_amount,
    refund_owed: row.refund_owed,
    flag: row.flag,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

const STATES = [
  'created',
  'paid',
  'expired',
  'failed',
  'amount_mismatch',
  'balance_limit',
  'refunded_partially',
  'refunded',
] as const satisfies readonly PaymentOrderState[];

/** The lists' filters; the page size is the listing's own (`parseLimit`, judged first). */
const orderFilter = z.object({
  state: z.enum(STATES, { error: `must be one of ${STATES.join(', ')}` }).optional(),
  /** `true`: only orders with a flag (operators). */
  flagged: z.literal(['true', true], { error: 'must be true or absent' }).optional(),
});

/** What the order lists filter by, each as it came (query string). */
export type OrderQuery = Unparsed<typeof orderFilter> & { readonly limit?: unknown };

/** Newest first, at most `limit` (1 to 100, default 50); `accountId` bounds it to one account. */
export async function listOrders(
  db: Kysely<Database>,
  accountId: string | undefined,
  query: OrderQuery,
): Promise<{ object: 'list'; data: PaymentOrder[] }> {
  const limit = parseLimit(query.limit, 50);
  const { state, flagged } = parseInput(orderFilter, query);
  let select = db.selectFrom('payment_orders').selectAll();
  if (accountId !== undefined) select = select.where('account_id', '=', accountId);
  if (state !== undefined) select = select.where('state', '=', state);
  if (flagged !== undefined) select = select.where('flag', 'is not', null);
  const rows = await select
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return { object: 'list', data: rows.map(paymentOrderView) };
}
