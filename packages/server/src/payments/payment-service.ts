import { createHash } from 'node:crypto';
import type { PaymentOrder } from '@tollgate/protocol';
import type { Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import { z } from 'zod';
import type { AccountService } from '../accounts/account-service.js';
import type { AuditLog } from '../audit/audit-log.js';
import { type LedgerEffects } from '../billing/journal.js';
import { lockAccountMoney } from '../billing/account-money.js';
import { movementAmount } from '../billing/money.js';
import { ApiError, invalidInput } from '../errors/api-error.js';
import { parseInput, type Unparsed } from '../errors/input-schema.js';
import type { Database, PaymentOrderTable } from '../store/schema.js';
import { applyPaymentEvent } from './payment-events.js';
import { listOrders, paymentOrderView, type OrderQuery } from './payment-orders.js';
import {
  MICRO_YUAN_PER_FEN,
  UnusableEventError,
  WebhookSignatureError,
  type PaymentEvent,
  type PaymentProvider,
} from './payment-provider.js';

/**
 * An online top-up: one movement's amount (billing/money.ts), in whole fen, the smallest unit
 * a checkout charges.
 */
const topUpOrderInput = z.object({
  amount: movementAmount.refine((amount) => amount % MICRO_YUAN_PER_FEN === 0, {
    error: `must be a whole number of fen (a multiple of ${MICRO_YUAN_PER_FEN} micro-yuan)`,
  }),
});

export interface PaymentServiceDeps {
  readonly db: Kysely<Database>;
  readonly accounts: AccountService;
  readonly audit: AuditLog;
  readonly effects: LedgerEffects;
  /** Absent when no provider is configured: online top-up answers that it is not. */
  readonly provider: PaymentProvider | undefined;
  readonly logger: FastifyBaseLogger;
  /** Unpaid orders one account may have at once (`limits.open_topups_per_account`). */
  readonly maxOpenOrdersPerAccount: number;
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
   * outside any transaction; a provider failure leaves the order `failed` and answers 502. An
   * account with `maxOpenOrdersPerAccount` orders still open is 429 `RATE_LIMITED` and nothing
   * is stored (`storeOrder`).
   */
  async startTopUp(
    accountId: string,
    input: Unparsed<typeof topUpOrderInput>,
    urls: (orderId: string) => ReturnUrls,
  ): Promise<{ order: PaymentOrder; checkout_url: string }> {
    const provider = this.requireProvider();
    const { amount } = parseInput(topUpOrderInput, input);
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
    await this.storeOrder(row, provider);
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

  /**
   * Stores a new order unless the account already has `maxOpenOrdersPerAccount` open ones
   * (`created`, younger than the provider's checkout lifetime): judged, as pending shares are
   * (shares/share-service.ts), under a lock of the account's row, so parallel requests count
   * each other's orders.
   */
  private async storeOrder(row: PaymentOrderTable, provider: PaymentProvider): Promise<void> {
    const limit = this.deps.maxOpenOrdersPerAccount;
    await this.deps.db.transaction().execute(async (trx) => {
      await lockAccountMoney(trx, row.account_id);
      const open = await trx
        .selectFrom('payment_orders')
        .select('created_at')
        .where('account_id', '=', row.account_id)
        .where('state', '=', 'created')
        .where('created_at', '>', row.created_at - provider.checkoutLifetimeMs)
        .orderBy('created_at')
        .limit(limit)
        .execute();
      const oldest = open[0];
      if (open.length >= limit && oldest !== undefined) {
        const seconds = Math.ceil(
          (oldest.created_at + provider.checkoutLifetimeMs - row.created_at) / 1000,
        );
        throw new ApiError(
          'RATE_LIMITED',
          `this account has ${open.length} top-up orders awaiting payment, the most allowed (limits.open_topups_per_account); pay one of them (its checkout_url in GET /console/api/topups) or wait until one expires`,
          undefined,
          { 'retry-after': String(Math.max(1, seconds)) },
        );
      }
      await trx.insertInto('payment_orders').values(row).execute();
    });
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
   * One webhook delivery: the signature is verified (400 and nothing stored when it is not); a
   * signed body that is not a usable event is 400, stored for the operator (`storeUnusable`) and
   * applies nothing; then, in one transaction, the event id is stored (a replay finds it and
   * changes nothing) and the event applied. A failure while applying rolls both back and answers
   * 500, so the provider delivers the event again and it is applied then, once.
   */
  async handleWebhook(
    rawBody: Buffer,
    headers: Record<string, string | string[] | undefined>,
  ): Promise<{ received: true; outcome: string }> {
    const provider = this.requireProvider();
    let event: PaymentEvent;
    try {
      event = provider.parseWebhook(rawBody, headers);
    } catch (error) {
      if (error instanceof WebhookSignatureError)
        throw invalidInput(
          'Stripe-Signature',
          `the webhook signature does not verify: ${error.message}`,
        );
      if (error instanceof UnusableEventError) {
        await this.storeUnusable(provider, rawBody, error);
        throw invalidInput(
          'body',
          `a signed webhook that is not a usable event (${error.message}); it was stored for the operator and nothing was applied`,
        );
      }
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

  /**
   * Keeps a signed but unusable body where the operator looks: a `payment_events` row with the
   * outcome `unusable` (its id derived from the body's hash, so a redelivery is stored once and
   * the id the body claimed stays free for a readable event) and an audit `payment.flagged`
   * saying why. Nothing else changes.
   */
  private async storeUnusable(
    provider: PaymentProvider,
    rawBody: Buffer,
    error: UnusableEventError,
  ): Promise<void> {
    const eventId = `unusable_${createHash('sha256').update(rawBody).digest('hex').slice(0, 32)}`;
    this.deps.logger.warn(
      { event: eventId, claimed_event: error.eventId, reason: error.message },
      'a signed payment webhook is not a usable event',
    );
    await this.deps.db.transaction().execute(async (trx) => {
      const stored = await trx
        .insertInto('payment_events')
        .values({
          provider: provider.name,
          event_id: eventId,
          type: error.type ?? 'unusable',
          order_id: null,
          outcome: 'unusable',
          received_at: this.deps.effects.clock.now(),
        })
        .onConflict((conflict) => conflict.columns(['provider', 'event_id']).doNothing())
        .executeTakeFirst();
      if (stored.numInsertedOrUpdatedRows !== 1n) return;
      await this.deps.audit.within(
        { kind: 'payment_provider', id: provider.name },
        {
          action: 'payment.flagged',
          reason: `a signed webhook that is not a usable event: ${error.message}; nothing applied`,
          detail: { event_id: eventId, claimed_event_id: error.eventId, event_type: error.type },
        },
      )(trx);
    });
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
