import type Stripe from 'stripe';
import {
  MICRO_YUAN_PER_FEN,
  UnusableEventError,
  WebhookSignatureError,
  type Checkout,
  type CheckoutOrder,
  type PaymentEvent,
  type PaymentProvider,
} from './payment-provider.js';

/** The payment methods a Chinese payer expects (Stripe enables each on the Stripe account). */
export const STRIPE_PAYMENT_METHODS = ['card', 'alipay', 'wechat_pay'] as const;

/** How long a Checkout Session can be paid: Stripe's default `expires_at` (24 hours). */
const CHECKOUT_LIFETIME_MS = 24 * 60 * 60 * 1000;

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
  readonly checkoutLifetimeMs = CHECKOUT_LIFETIME_MS;

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
    let event: unknown;
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
    return stripeEvent(usableEvent(event));
  }
}

/**
 * The verified body as an event, or UnusableEventError: the library parses any JSON (`null`,
 * `[]`, an object without `data`), and only the envelope every event has is read blindly below.
 */
function usableEvent(body: unknown): Stripe.Event {
  if (!isObject(body)) throw new UnusableEventError('the body is not an event object', null, null);
  const id = boundedText(body['id']);
  const type = boundedText(body['type']);
  if (id === null || type === null)
    throw new UnusableEventError('the event has no id or no type', id, type);
  const data = body['data'];
  if (!isObject(data) || !isObject(data['object']))
    throw new UnusableEventError('the event has no data.object', id, type);
  if (ACTED_ON.has(type) && boundedText(data['object']['id']) === null)
    throw new UnusableEventError(`the ${type} event's object has no id`, id, type);
  return body as unknown as Stripe.Event;
}

/** The event types `stripeEvent` reads beyond the envelope. */
const ACTED_ON = new Set([
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'checkout.session.expired',
  'checkout.session.async_payment_failed',
  'charge.refunded',
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A non-empty string of at most 255 characters (Stripe's ids and types are far shorter), or null. */
function boundedText(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 && value.length <= 255 ? value : null;
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

// The fields below are read as `unknown`: a signed body can still hold anything in them, and a
// wrong type must match no order rather than reach the database.
function orderIdOf(metadata: Stripe.Metadata | null, reference: string | null): string | null {
  const named: unknown = isObject(metadata) ? metadata['order_id'] : undefined;
  return boundedText(named) ?? boundedText(reference);
}

function idOf(value: string | { id: string } | null): string | null {
  const unknownValue: unknown = value;
  return isObject(unknownValue) ? boundedText(unknownValue['id']) : boundedText(unknownValue);
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
