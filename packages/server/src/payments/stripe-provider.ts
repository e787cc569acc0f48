import type Stripe from 'stripe';
import {
  MICRO_YUAN_PER_FEN,
  WebhookSignatureError,
  type Checkout,
  type CheckoutOrder,
  type PaymentEvent,
  type PaymentProvider,
} from './payment-provider.js';

/** The payment methods a Chinese payer expects (Stripe enables each on the Stripe account). */
export const STRIPE_PAYMENT_METHODS = ['card', 'alipay', 'wechat_pay'] as const;

/**
 * Stripe Checkout in CNY (docs/payments.md). The client is injected: production builds it from
 * STRIPE_SECRET_KEY (services.ts), tests give it an `httpClient` that answers without the
 * network and records what would be sent. Signatures are verified with the library's
 * `constructEvent` against the webhook secret, with the injected clock as the time received
 * (the library refuses a signature older than its five-minute tolerance: a captured webhook
 * cannot be replayed days later with a fresh meaning).
 */
export class StripeProvider implements PaymentProvider {
  readonly name = 'stripe';
  readonly currency = 'cny';

  constructor(
    private readonly stripe: Stripe,
    private readonly webhookSecret: string,
    private readonly clock: { now(): number },
  ) {}

  async createCheckout(order: CheckoutOrder): Promise<Checkout> {
    const session = await this.stripe.checkout.sessions.create(
      {
        mode: 'payment',
        currency: this.currency,
        // A filter on what Stripe offers (each must also be enabled on the Stripe account).
        allowed_payment_method_types: [...STRIPE_PAYMENT_METHODS],
        // WeChat Pay in Checkout needs the client named; `web` shows the QR code to scan.
        payment_method_options: { wechat_pay: { client: 'web' } },
        line_items: [
          {
            quantity: 1,
            price_data: {
              currency: this.currency,
              unit_amount: order.amount / MICRO_YUAN_PER_FEN,
              product_data: { name: 'Tollgate top-up' },
            },
          },
        ],
        client_reference_id: order.id,
        // On the session (checkout events) and on the payment (its charges and refunds).
        metadata: { order_id: order.id, account_id: order.accountId },
        payment_intent_data: { metadata: { order_id: order.id, account_id: order.accountId } },
        success_url: order.successUrl,
        cancel_url: order.cancelUrl,
      },
      // A retried create (network failure) opens the same session, not a second one.
      { idempotencyKey: `checkout-${order.id}` },
    );
    if (session.url === null) throw new Error(`Stripe opened session ${session.id} without a URL`);
    return { sessionId: session.id, url: session.url };
  }

  parseWebhook(
    rawBody: Buffer,
    headers: Record<string, string | string[] | undefined>,
  ): PaymentEvent {
    const signature = headers['stripe-signature'];
    if (typeof signature !== 'string' || signature === '')
      throw new WebhookSignatureError('the Stripe-Signature header is missing');
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(
        rawBody,
        signature,
        this.webhookSecret,
        undefined,
        undefined,
        this.clock.now(),
      );
    } catch (error) {
      throw new WebhookSignatureError((error as Error).message.split('\n')[0] ?? 'bad signature');
    }
    return stripeEvent(event);
  }
}

/** Reads the one Stripe event Tollgate acts on into the seam's terms. */
function stripeEvent(event: Stripe.Event): PaymentEvent {
  const base = { id: event.id, type: event.type };
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const session = event.data.object;
      // A completed session with an asynchronous method still pending is paid only when its
      // `async_payment_succeeded` follows.
      if (session.payment_status !== 'paid') return { ...base, kind: 'ignored' };
      return {
        ...base,
        kind: 'paid',
        orderId: orderIdOf(session.metadata, session.client_reference_id),
        sessionId: session.id,
        paymentId: idOf(session.payment_intent),
        amount: fenToMicroYuan(session.amount_total),
        currency: session.currency ?? '',
      };
    }
    case 'checkout.session.expired':
    case 'checkout.session.async_payment_failed': {
      const session = event.data.object;
      return {
        ...base,
        kind: event.type === 'checkout.session.expired' ? 'expired' : 'failed',
        orderId: orderIdOf(session.metadata, session.client_reference_id),
        sessionId: session.id,
      };
    }
    case 'charge.refunded': {
      const charge = event.data.object;
      return {
        ...base,
        kind: 'refunded',
        orderId: orderIdOf(charge.metadata, null),
        paymentId: idOf(charge.payment_intent),
        refundedTotal: fenToMicroYuan(charge.amount_refunded),
        currency: charge.currency,
      };
    }
    default:
      return { ...base, kind: 'ignored' };
  }
}

function orderIdOf(metadata: Stripe.Metadata | null, reference: string | null): string | null {
  return metadata?.['order_id'] ?? reference ?? null;
}

function idOf(value: string | { id: string } | null): string | null {
  return value === null ? null : typeof value === 'string' ? value : value.id;
}

/**
 * Fen as Stripe reports them → micro-yuan. Anything but a non-negative safe result becomes -1,
 * which matches no order (so it is flagged as a mismatch rather than credited).
 */
function fenToMicroYuan(fen: number | null): number {
  if (fen === null || !Number.isSafeInteger(fen) || fen < 0) return -1;
  const micro = fen * MICRO_YUAN_PER_FEN;
  return Number.isSafeInteger(micro) ? micro : -1;
}
