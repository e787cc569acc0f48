import type { Kysely } from 'kysely';
import type { AccountService } from '../accounts/account-service.js';
import type { AuditActor, AuditLog } from '../audit/audit-log.js';
import { debitAvailable, type LedgerEffects } from '../billing/ledger.js';
import type { Database, PaymentOrderTable } from '../store/schema.js';
import type { PaymentEvent } from './payment-provider.js';

export interface EventDeps {
  readonly accounts: AccountService;
  readonly audit: AuditLog;
  readonly effects: LedgerEffects;
}

/** What one event did, stored with its id (payment_events.outcome) and answered to the provider. */
export interface EventOutcome {
  readonly outcome: string;
  readonly orderId: string | null;
}

/** States from which the provider's word that the money arrived credits the order. */
const PAYABLE = ['created', 'expired', 'failed'] as const;
/** States whose payment was credited, so a refund is taken back from the balance. */
const CREDITED = ['paid', 'refunded_partially'] as const;

/**
 * Applies one verified, first-seen event inside the transaction that stored its id: the order's
 * state moves by one guarded update, and money moves only with it (the top-up service for a
 * payment, `debitAvailable` for a refund). Anything thrown rolls back the event id too, so the
 * provider's redelivery is applied as if first seen. Reordered events find the order past them
 * and change nothing (an expiry after the payment; an older refund total after a newer one).
 */
export async function applyPaymentEvent(
  trx: Kysely<Database>,
  deps: EventDeps,
  provider: string,
  event: PaymentEvent,
): Promise<EventOutcome> {
  if (event.kind === 'ignored') return { outcome: 'ignored', orderId: null };
  const order = await findOrder(trx, provider, event);
  if (order === undefined) return { outcome: 'unknown_order', orderId: null };
  const actor: AuditActor = { kind: 'payment_provider', id: provider };
  const now = deps.effects.clock.now();
  const at = (outcome: string) => ({ outcome, orderId: order.id });
  const flag = async (state: PaymentOrderTable['state'] | undefined, reason: string) => {
    await trx
      .updateTable('payment_orders')
      .set({ ...(state === undefined ? {} : { state }), flag: reason, updated_at: now })
      .where('id', '=', order.id)
      .where('state', '=', order.state)
      .execute();
    await deps.audit.within(actor, {
      action: 'payment.flagged',
      targetId: order.id,
      accountId: order.account_id,
      reason,
      detail: { event_id: event.id, event_type: event.type },
    })(trx);
  };

  switch (event.kind) {
    case 'paid': {
      if (event.sessionId !== order.provider_session_id) {
        // Signed by the provider, but for a checkout this order did not open (another
        // integration on the same provider account reusing the id): never credit it.
        await flag(undefined, `event ${event.id} names this order for another session`);
        return at('session_mismatch');
      }
      if (!PAYABLE.some((state) => state === order.state)) return at(`already_${order.state}`);
      if (event.currency !== order.currency || event.amount !== order.amount) {
        await flag(
          'amount_mismatch',
          `the provider reported ${event.amount} micro-yuan in ${event.currency || 'no currency'}; the order is ${order.amount} in ${order.currency}; nothing credited`,
        );
        return at('amount_mismatch');
      }
      const moved = await trx
        .updateTable('payment_orders')
        .set({ state: 'paid', provider_payment_id: event.paymentId, updated_at: now })
        .where('id', '=', order.id)
        .where('state', '=', order.state)
        .executeTakeFirst();
      if (moved.numUpdatedRows !== 1n) throw new Error(`order ${order.id} changed meanwhile`);
      await deps.accounts.topUpWithin(
        trx,
        order.account_id,
        { amount: order.amount, reference: `payment:${order.id}`, source: 'payment' },
        deps.audit.within(actor, {
          action: 'payment.credit',
          targetId: order.id,
          accountId: order.account_id,
          detail: { event_id: event.id, session_id: event.sessionId },
        }),
      );
      return at('credited');
    }
    case 'expired':
    case 'failed': {
      if (event.sessionId !== order.provider_session_id) return at('session_mismatch');
      const moved = await trx
        .updateTable('payment_orders')
        .set({ state: event.kind, updated_at: now })
        .where('id', '=', order.id)
        .where('state', '=', 'created')
        .executeTakeFirst();
      return at(moved.numUpdatedRows === 1n ? event.kind : `already_${order.state}`);
    }
    case 'refunded':
      return refund(trx, deps, actor, order, event, flag);
  }
}

async function refund(
  trx: Kysely<Database>,
  deps: EventDeps,
  actor: AuditActor,
  order: PaymentOrderTable,
  event: Extract<PaymentEvent, { kind: 'refunded' }>,
  flag: (state: undefined, reason: string) => Promise<void>,
): Promise<EventOutcome> {
  const at = (outcome: string) => ({ outcome, orderId: order.id });
  if (!CREDITED.some((state) => state === order.state)) {
    await flag(
      undefined,
      `the provider refunded ${event.refundedTotal} micro-yuan of an order in state ${order.state} (never credited)`,
    );
    return at('refund_uncredited');
  }
  if (event.currency !== order.currency || event.refundedTotal < 0) {
    await flag(
      undefined,
      `refund event ${event.id} reports ${event.refundedTotal} in ${event.currency}`,
    );
    return at('refund_mismatch');
  }
  // The provider reports a running total: a reordered older total refunds nothing more.
  const total = Math.min(event.refundedTotal, order.amount);
  const refunded = total - order.refunded_amount;
  if (refunded <= 0) return at('refund_already_applied');
  const debited = await debitAvailable(trx, deps.effects, {
    accountId: order.account_id,
    amount: refunded,
    reason: `refund of payment order ${order.id} (event ${event.id})`,
  });
  const owed = refunded - debited;
  const owedTotal = order.refund_owed + owed;
  const moved = await trx
    .updateTable('payment_orders')
    .set({
      state: total >= order.amount ? 'refunded' : 'refunded_partially',
      refunded_amount: total,
      refund_owed: owedTotal,
      flag:
        owedTotal > 0
          ? `refunded ${total} micro-yuan; ${owedTotal} of it was already spent and is owed by the account`
          : order.flag,
      updated_at: deps.effects.clock.now(),
    })
    .where('id', '=', order.id)
    .where('state', '=', order.state)
    .where('refunded_amount', '=', order.refunded_amount)
    .executeTakeFirst();
  if (moved.numUpdatedRows !== 1n) throw new Error(`order ${order.id} changed meanwhile`);
  await deps.audit.within(actor, {
    action: 'payment.refund',
    targetId: order.id,
    accountId: order.account_id,
    amount: debited > 0 ? debited : null,
    reason: owed > 0 ? `${owed} micro-yuan could not be taken back (not available)` : null,
    detail: { event_id: event.id, refunded, debited, owed },
  })(trx);
  return at(owed > 0 ? 'refund_owed' : 'refund_debited');
}

/** The order an event is about: its id in the metadata, else (refunds) the payment it names. */
async function findOrder(
  trx: Kysely<Database>,
  provider: string,
  event: Exclude<PaymentEvent, { kind: 'ignored' }>,
): Promise<PaymentOrderTable | undefined> {
  const byId =
    event.orderId === null
      ? undefined
      : await trx
          .selectFrom('payment_orders')
          .selectAll()
          .where('id', '=', event.orderId)
          .where('provider', '=', provider)
          .executeTakeFirst();
  if (byId !== undefined || event.kind !== 'refunded' || event.paymentId === null) return byId;
  return trx
    .selectFrom('payment_orders')
    .selectAll()
    .where('provider_payment_id', '=', event.paymentId)
    .where('provider', '=', provider)
    .executeTakeFirst();
}
