/**
 * The payment-provider seam (docs/payments.md): what the order service needs from a provider,
 * and the only events it acts on. An adapter (stripe-provider.ts) turns its provider's API and
 * webhooks into these; the service never sees a provider's own types.
 */

/** What a checkout is opened for: the order as the service stored it. */
export interface CheckoutOrder {
  readonly id: string;
  readonly accountId: string;
  /** Micro-yuan; a whole number of fen (the service checks before calling). */
  readonly amount: number;
  /** Where the payer's browser returns after paying or giving up (absolute URLs). */
  readonly successUrl: string;
  readonly cancelUrl: string;
}

export interface Checkout {
  /** The provider's session id: every later event about this checkout names it. */
  readonly sessionId: string;
  /** Where the payer's browser goes to pay. */
  readonly url: string;
}

/** What a verified webhook says, reduced to what moves an order. Amounts are micro-yuan. */
export type PaymentEvent = { readonly id: string; readonly type: string } & (
  | {
      readonly kind: 'paid';
      readonly orderId: string | null;
      readonly sessionId: string;
      readonly paymentId: string | null;
      /** What the provider charged, in its currency: compared with the order before crediting. */
      readonly amount: number;
      readonly currency: string;
    }
  | {
      readonly kind: 'expired' | 'failed';
      readonly orderId: string | null;
      readonly sessionId: string;
    }
  | {
      readonly kind: 'refunded';
      readonly orderId: string | null;
      readonly paymentId: string | null;
      /** The running total refunded for this payment (not this refund alone). */
      readonly refundedTotal: number;
      readonly currency: string;
    }
  /** Verified, but nothing Tollgate acts on (stored so a replay is recognised). */
  | { readonly kind: 'ignored' }
);

export interface PaymentProvider {
  /** `stripe`: stored on each order and event. */
  readonly name: string;
  /** The currency every order is charged in (lower case, as providers write it): `cny`. */
  readonly currency: string;
  /**
   * How long a checkout it opens can be paid, in milliseconds: an order older than this is no
   * longer open (counted against `limits.open_topups_per_account`) even if its expiry event
   * never arrives.
   */
  readonly checkoutLifetimeMs: number;
  createCheckout(order: CheckoutOrder): Promise<Checkout>;
  /**
   * Verifies the webhook's signature over the raw body and reads its event; throws
   * `WebhookSignatureError` for anything not signed with the webhook secret (or too old).
   */
  parseWebhook(
    rawBody: Buffer,
    headers: Record<string, string | string[] | undefined>,
  ): PaymentEvent;
}

/** A webhook whose signature does not verify: answered 400, nothing stored. */
export class WebhookSignatureError extends Error {}

/**
 * A webhook signed with the secret whose body is not an event the adapter can read (not an
 * object, no id or type, no `data.object`): answered 400, stored for the operator, nothing
 * applied. `eventId` and `type` are what the body claimed, when it did.
 */
export class UnusableEventError extends Error {
  constructor(
    message: string,
    readonly eventId: string | null,
    readonly type: string | null,
  ) {
    super(message);
  }
}

/** Micro-yuan in one fen (0.01 yuan), the smallest amount a provider charges in CNY. */
export const MICRO_YUAN_PER_FEN = 10_000;
