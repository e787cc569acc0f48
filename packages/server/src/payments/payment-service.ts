import type { Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { AccountService } from '../accounts/account-service.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { LedgerEffects } from '../billing/ledger.js';
import { parseMovementAmount } from '../billing/money.js';
import { ApiError, invalidInput } from '../errors/api-error.js';
import type { Database, PaymentOrderTable } from '../store/schema.js';
import { applyPaymentEvent } from './payment-events.js';
import {
  listOrders,
  paymentOrderView,
  type OrderQuery,
  type PaymentOrderView,
} from './payment-orders.js';
import {
  MICRO_YUAN_PER_FEN,
  WebhookSignatureError,
  type PaymentProvider,
} from './payment-provider.js';

export interface PaymentServiceDeps {
  readonly db: Kysely<Database>;
  readonly accounts: AccountService;
  readonly audit: AuditLog;
  readonly effects: LedgerEffects;
  /** Absent when no provider is configured: online top-up answers that it is not. */
  readonly provider: PaymentProvider | undefined;
  readonly logger: FastifyBaseLogger;
}

/** Where the payer returns: built from the console's own address by the route. */
export interface ReturnUrls {
  readonly successUrl: string;
  readonly cancelUrl: string;
}

/**
 * Online top-up (docs/payments.md): a member opens a checkout for an amount (an order), the
 * provider's signed webhook says what happened, and an order is credited at most once, through
 * the same top-up service every other top-up uses, in the transaction that marks it paid and
 * stores the event id.
 */
export class PaymentService {
  constructor(private readonly deps: PaymentServiceDeps) {}

  /** What the console needs to show the top-up button or say why there is none. */
  status(): {
    object: 'payment_status';
    enabled: boolean;
    provider: string | null;
    currency: string | null;
  } {
    const provider = this.deps.provider;
    return {
      object: 'payment_status',
      enabled: provider !== undefined,
      provider: provider?.name ?? null,
      currency: provider?.currency ?? null,
    };
  }

  /**
   * Opens a checkout for `amount` micro-yuan (a whole number of fen, within one top-up's
   * bounds): the order is stored first (`created`), then the provider is asked for a session
   * outside any transaction; a provider failure leaves the order `failed` and answers 502.
   */
  async startTopUp(
    accountId: string,
    input: { amount: unknown },
    urls: (orderId: string) => ReturnUrls,
  ): Promise<{ order: PaymentOrderView; checkout_url: string }> {
    const provider = this.requireProvider();
    const amount = parseMovementAmount(input.amount, 'amount');
    if (amount % MICRO_YUAN_PER_FEN !== 0)
      throw invalidInput(
        'amount',
        `must be a whole number of fen (a multiple of ${MICRO_YUAN_PER_FEN} micro-yuan)`,
      );
    await this.deps.accounts.get(accountId);
    const now = this.deps.effects.clock.now();
    const row: PaymentOrderTable = {
      id: this.deps.effects.ids.next('pay'),
      account_id: accountId,
      provider: provider.name,
      amount,
      currency: provider.currency,
      state: 'created',
      provider_session_id: null,
      provider_payment_id: null,
      checkout_url: null,
      refunded_amount: 0,
      refund_owed: 0,
      flag: null,
      created_at: now,
      updated_at: now,
    };
    await this.deps.db.insertInto('payment_orders').values(row).execute();
    let checkout;
    try {
      checkout = await provider.createCheckout({ id: row.id, accountId, amount, ...urls(row.id) });
    } catch (error) {
      this.deps.logger.warn({ err: error, order: row.id }, 'opening a checkout failed');
      await this.deps.db
        .updateTable('payment_orders')
        .set({ state: 'failed', updated_at: this.deps.effects.clock.now() })
        .where('id', '=', row.id)
        .where('state', '=', 'created')
        .execute();
      throw new ApiError(
        'UPSTREAM_ERROR',
        'the payment provider could not open a checkout; try again',
      );
    }
    const opened = {
      ...row,
      provider_session_id: checkout.sessionId,
      checkout_url: checkout.url,
      updated_at: this.deps.effects.clock.now(),
    };
    await this.deps.db
      .updateTable('payment_orders')
      .set({
        provider_session_id: opened.provider_session_id,
        checkout_url: opened.checkout_url,
        updated_at: opened.updated_at,
      })
      .where('id', '=', row.id)
      .where('state', '=', 'created')
      .execute();
    return { order: paymentOrderView(opened), checkout_url: checkout.url };
  }

  /** The account's orders (a member's page). */
  listForAccount(accountId: string, query: OrderQuery) {
    return listOrders(this.deps.db, accountId, query);
  }

  /** Every account's orders, by state or only the flagged (operators). */
  listAll(query: OrderQuery) {
    return listOrders(this.deps.db, undefined, query);
  }

  /**
   * One webhook delivery: the signature is verified (400 and nothing stored when it is not);
   * then, in one transaction, the event id is stored (a replay finds it and changes nothing)
   * and the event applied. A failure while applying rolls both back and answers 500, so the
   * provider delivers the event again and it is applied then, once.
   */
  async handleWebhook(
    rawBody: Buffer,
    headers: Record<string, string | string[] | undefined>,
  ): Promise<{ received: true; outcome: string }> {
    const provider = this.requireProvider();
    let event;
    try {
      event = provider.parseWebhook(rawBody, headers);
    } catch (error) {
      if (error instanceof WebhookSignatureError)
        throw invalidInput(
          'Stripe-Signature',
          `the webhook signature does not verify: ${error.message}`,
        );
      throw error;
    }
    try {
      const outcome = await this.deps.db.transaction().execute(async (trx) => {
        const stored = await trx
          .insertInto('payment_events')
          .values({
            provider: provider.name,
            event_id: event.id,
            type: event.type,
            order_id: null,
            outcome: 'applying',
            received_at: this.deps.effects.clock.now(),
          })
          .onConflict((conflict) => conflict.columns(['provider', 'event_id']).doNothing())
          .executeTakeFirst();
        if (stored.numInsertedOrUpdatedRows !== 1n) return 'replayed';
        const applied = await applyPaymentEvent(trx, this.deps, provider.name, event);
        await trx
          .updateTable('payment_events')
          .set({ outcome: applied.outcome, order_id: applied.orderId })
          .where('provider', '=', provider.name)
          .where('event_id', '=', event.id)
          .execute();
        return applied.outcome;
      });
      return { received: true, outcome };
    } catch (error) {
      this.deps.logger.error({ err: error, event: event.id }, 'applying a payment event failed');
      throw new ApiError(
        'INTERNAL_ERROR',
        `event ${event.id} could not be applied; nothing changed, deliver it again`,
      );
    }
  }

  private requireProvider(): PaymentProvider {
    if (this.deps.provider === undefined)
      throw new ApiError(
        'UNSUPPORTED_CAPABILITY',
        'online top-up is not configured on this gateway (STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are not set); redeem a code instead',
      );
    return this.deps.provider;
  }
}
