import type { Kysely, Updateable } from 'kysely';
import type { AccountService } from '../accounts/account-service.js';
import type { AuditActor, AuditLog } from '../audit/audit-log.js';
import { type LedgerEffects } from '../billing/journal.js';
import { lockAccountMoney, takeRefund } from '../billing/account-money.js';
import { maxBalanceBeforeCredit } from '../billing/money.js';
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
const CREDITED = ['paid', 'refunded_partially', 'refunded'] as const;

/**
 * How many times one event is judged again on an order another event moved meanwhile. Each move
 * goes forward (out of `created`, or a larger refunded total), so a few always suffice.
 */
const MAX_ATTEMPTS = 5;

/** An order moved by another event between this one's read and its guarded move. */
const MOVED_MEANWHILE = Symbol('moved meanwhile');
type Applied = EventOutcome | typeof MOVED_MEANWHILE;

/**
 * Applies one verified, first-seen event inside the transaction that stored its id: the order's
 * state moves by one guarded update (`moveOrder`), and money moves only after it (the top-up
 * service for a payment, `takeRefund` for a refund). A distinct event about the same order that
 * committed between this one's read and its move (another delivery, another instance) makes the
 * move find nothing: the event is then judged again on the order as it now is, and answered with
 * the outcome already decided (`already_paid`, `refund_already_applied`, …) instead of an
 * error. Anything thrown rolls back the event id too, so the provider's redelivery is applied
 * as if first seen. Reordered events find the order past them and change nothing (an expiry
 * after the payment; an older refund total after a newer one).
 */
export async function applyPaymentEvent(
  trx: Kysely<Database>,
  deps: EventDeps,
  provider: string,
  event: PaymentEvent,
): Promise<EventOutcome> {
  if (event.kind === 'ignored') return { outcome: 'ignored', orderId: null };
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    const order = await findOrder(trx, provider, event);
    if (order === undefined) return { outcome: 'unknown_order', orderId: null };
    const applied = await applyToOrder(trx, deps, provider, event, order);
    if (applied !== MOVED_MEANWHILE) return applied;
  }
  throw new Error(`event ${event.id}: its order kept changing under it`);
}

async function applyToOrder(
  trx: Kysely<Database>,
  deps: EventDeps,
  provider: string,
  event: Exclude<PaymentEvent, { kind: 'ignored' }>,
  order: PaymentOrderTable,
): Promise<Applied> {
  const actor: AuditActor = { kind: 'payment_provider', id: provider };
  const at = (outcome: string) => ({ outcome, orderId: order.id });
  const move = (set: OrderChange) => moveOrder(trx, deps, order, set);
  const flagged = (reason: string) =>
    deps.audit.within(actor, {
      action: 'payment.flagged',
      targetId: order.id,
      accountId: order.account_id,
      reason,
      detail: { event_id: event.id, event_type: event.type },
    })(trx);
  /** Flags the order (and moves it to `state`, if given); false when another event moved it. */
  const flag = async (reason: string, state?: PaymentOrderTable['state']) => {
    if (!(await move({ ...(state === undefined ? {} : { state }), flag: reason }))) return false;
    await flagged(reason);
    return true;
  };

  switch (event.kind) {
    case 'paid': {
      if (event.sessionId !== order.provider_session_id) {
        // Signed by the provider, but for a checkout this order did not open (another
        // integration on the same provider account reusing the id): never credit it.
        if (!(await flag(`event ${event.id} names this order for another session`)))
          return MOVED_MEANWHILE;
        return at('session_mismatch');
      }
      if (!PAYABLE.some((state) => state === order.state)) return at(`already_${order.state}`);
      if (event.currency !== order.currency || event.amount !== order.amount) {
        const reason = `the provider reported ${event.amount} micro-yuan in ${event.currency || 'no currency'}; the order is ${order.amount} in ${order.currency}; nothing credited`;
        if (!(await flag(reason, 'amount_mismatch'))) return MOVED_MEANWHILE;
        return at('amount_mismatch');
      }
      if (!(await move({ state: 'paid', provider_payment_id: event.paymentId })))
        return MOVED_MEANWHILE;
      // The order is ours now (its row locked by the move); the account's row is locked next, so
      // whether the credit fits under the maximum balance stays true until it is made.
      const account = await lockAccountMoney(trx, order.account_id);
      if (account.balance > maxBalanceBeforeCredit(order.amount)) {
        // Answered 2xx: redelivering could never credit it. An operator settles it (refund the
        // payment, or credit it once the member has spent down).
        const reason = `paid, but crediting ${order.amount} micro-yuan would bring the balance (${account.balance}) above the maximum balance; nothing credited`;
        await trx
          .updateTable('payment_orders')
          .set({ state: 'balance_limit', flag: reason, updated_at: deps.effects.clock.now() })
          .where('id', '=', order.id)
          .where('state', '=', 'paid')
          .execute();
        await flagged(reason);
        return at('balance_limit');
      }
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
      if (order.state !== 'created') return at(`already_${order.state}`);
      if (!(await move({ state: event.kind }))) return MOVED_MEANWHILE;
      return at(event.kind);
    }
    case 'refunded': {
      if (!CREDITED.some((state) => state === order.state)) {
        const reason = `the provider refunded ${event.refundedTotal} micro-yuan of an order in state ${order.state} (never credited)`;
        if (!(await flag(reason))) return MOVED_MEANWHILE;
        return at('refund_uncredited');
      }
      if (event.currency !== order.currency || event.refundedTotal < 0) {
        const reason = `refund event ${event.id} reports ${event.refundedTotal} in ${event.currency}`;
        if (!(await flag(reason))) return MOVED_MEANWHILE;
        return at('refund_mismatch');
      }
      return refund(trx, deps, actor, order, event, move);
    }
  }
}

/**
 * The newly refunded part of a credited order: the order's refunded total moves first (one
 * guarded update), then the money (`takeRefund`: what is available now, the rest owed by the
 * account and paid from the next money that becomes available).
 */
async function refund(
  trx: Kysely<Database>,
  deps: EventDeps,
  actor: AuditActor,
  order: PaymentOrderTable,
  event: Extract<PaymentEvent, { kind: 'refunded' }>,
  move: (set: OrderChange) => Promise<boolean>,
): Promise<Applied> {
  const at = (outcome: string) => ({ outcome, orderId: order.id });
  // The provider reports a running total: an older total delivered late refunds nothing more
  // and changes nothing (a fully refunded order included).
  const total = Math.min(event.refundedTotal, order.amount);
  const refunded = total - order.refunded_amount;
  if (refunded <= 0) return at('refund_already_applied');
  const state = total >= order.amount ? 'refunded' : 'refunded_partially';
  if (!(await move({ state, refunded_amount: total }))) return MOVED_MEANWHILE;
  const { taken, owed } = await takeRefund(trx, deps.effects, {
    accountId: order.account_id,
    amount: refunded,
    reason: `refund of payment order ${order.id} (event ${event.id})`,
  });
  if (owed > 0) {
    const owedTotal = order.refund_owed + owed;
    // The row is this transaction's since the move above: guarded by what the move wrote.
    await trx
      .updateTable('payment_orders')
      .set({
        refund_owed: owedTotal,
        flag: `refunded ${total} micro-yuan; ${owedTotal} of it could not be taken back (already spent or held) and is owed by the account: taken from the next money that becomes available (the account's owed shows what is left)`,
      })
      .where('id', '=', order.id)
      .where('state', '=', state)
      .where('refunded_amount', '=', total)
      .execute();
  }
  await deps.audit.within(actor, {
    action: 'payment.refund',
    targetId: order.id,
    accountId: order.account_id,
    amount: taken > 0 ? taken : null,
    reason:
      owed > 0
        ? `${owed} micro-yuan could not be taken back now (not available): owed by the account, taken from the next money that becomes available`
        : null,
    detail: { event_id: event.id, refunded, debited: taken, owed },
  })(trx);
  return at(owed > 0 ? 'refund_owed' : 'refund_debited');
}

/** What a move writes on an order (besides `updated_at`). */
type OrderChange = Omit<Updateable<PaymentOrderTable>, 'id' | 'account_id' | 'updated_at'>;

/**
 * The one guarded transition of an order: from the state and refunded total it was read in.
 * False when another event moved it first (nothing written); the caller judges again.
 */
async function moveOrder(
  trx: Kysely<Database>,
  deps: EventDeps,
  order: PaymentOrderTable,
  set: OrderChange,
): Promise<boolean> {
  const moved = await trx
    .updateTable('payment_orders')
    .set({ ...set, updated_at: deps.effects.clock.now() })
    .where('id', '=', order.id)
    .where('state', '=', order.state)
    .where('refunded_amount', '=', order.refunded_amount)
    .executeTakeFirst();
  return moved.numUpdatedRows === 1n;
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
