import Stripe from 'stripe';
import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { consoleCall, signedInMember } from '../console/console-member.js';
import type { TestGateway } from '../helpers/gateway.js';

export const SECRET_KEY = 'sk_test_tollgate_0123456789';
export const WEBHOOK_SECRET = 'whsec_tollgate_test_0123456789';

/** One request the Stripe client would have sent, as the fake network received it. */
export interface SentToStripe {
  method: string;
  url: string;
  headers: Record<string, string>;
  form: URLSearchParams;
}

/**
 * Stripe's client with a fetch that never leaves the process: each checkout session create is
 * recorded and answered like Stripe would (`cs_test_<n>`, a checkout URL); after `goDown()`
 * every call answers 500 (the client's own retries included: the provider is down).
 */
export function fakeStripeNetwork() {
  const sent: SentToStripe[] = [];
  let down = false;
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    sent.push({
      method: init?.method ?? 'GET',
      url: input instanceof Request ? input.url : input.toString(),
      headers,
      form: new URLSearchParams(typeof init?.body === 'string' ? init.body : ''),
    });
    if (down) {
      return new Response(JSON.stringify({ error: { type: 'api_error', message: 'down' } }), {
        status: 500,
        headers: { 'content-type': 'application/json' },
      });
    }
    const id = `cs_test_${sent.length}`;
    return new Response(
      JSON.stringify({
        id,
        object: 'checkout.session',
        url: `https://checkout.stripe.com/c/pay/${id}`,
      }),
      { status: 200, headers: { 'content-type': 'application/json', 'request-id': `req_${id}` } },
    );
  }) as typeof fetch;
  return {
    sent,
    goDown: () => void (down = true),
    settings: {
      secretKey: SECRET_KEY,
      webhookSecret: WEBHOOK_SECRET,
      httpClient: Stripe.createFetchHttpClient(fetchFn),
    },
  };
}

/** An order opened through the console by a signed-in member, with what Stripe would see. */
export interface OpenedOrder {
  orderId: string;
  sessionId: string;
  amount: number;
  accountId: string;
}

export async function openOrder(
  gateway: TestGateway,
  amount: number,
  member?: Awaited<ReturnType<typeof signedInMember>>,
): Promise<OpenedOrder & { member: Awaited<ReturnType<typeof signedInMember>> }> {
  const who = member ?? (await signedInMember(gateway));
  const response = await consoleCall(gateway, 'POST', '/console/api/topups', {
    signed: who.signed,
    body: { amount },
  });
  expect(response.statusCode).toBe(201);
  const body = response.json<{ order: { id: string }; checkout_url: string }>();
  const sessionId = body.checkout_url.split('/').at(-1) ?? '';
  return { orderId: body.order.id, sessionId, amount, accountId: who.accountId, member: who };
}

/** A Checkout Session event about `order`, as Stripe sends it (amount in fen). */
export function sessionEvent(
  id: string,
  type: string,
  order: OpenedOrder,
  session: Record<string, unknown> = {},
) {
  return {
    id,
    object: 'event',
    type,
    data: {
      object: {
        id: order.sessionId,
        object: 'checkout.session',
        amount_total: order.amount / 10_000,
        currency: 'cny',
        payment_status: type === 'checkout.session.expired' ? 'unpaid' : 'paid',
        payment_intent: `pi_for_${order.orderId}`,
        client_reference_id: order.orderId,
        metadata: { order_id: order.orderId, account_id: order.accountId },
        ...session,
      },
    },
  };
}

/** `charge.refunded` with Stripe's running total `refundedFen` for the order's payment. */
export function refundEvent(id: string, order: OpenedOrder, refundedFen: number) {
  return {
    id,
    object: 'event',
    type: 'charge.refunded',
    data: {
      object: {
        id: `ch_for_${order.orderId}`,
        object: 'charge',
        amount: order.amount / 10_000,
        amount_refunded: refundedFen,
        currency: 'cny',
        payment_intent: `pi_for_${order.orderId}`,
        metadata: { order_id: order.orderId },
      },
    },
  };
}

/** Delivers `event` to the webhook, signed with the library's own test helper. */
export function deliver(
  gateway: TestGateway,
  event: unknown,
  options: {
    secret?: string;
    timestampSeconds?: number;
    tamper?: (payload: string) => string;
  } = {},
): Promise<LightMyRequestResponse> {
  const payload = JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? WEBHOOK_SECRET,
    timestamp: options.timestampSeconds ?? Math.floor(gateway.services.clock.now() / 1000),
  });
  return gateway.app.inject({
    method: 'POST',
    url: '/payments/stripe/webhook',
    headers: { 'stripe-signature': signature, 'content-type': 'application/json' },
    payload: options.tamper === undefined ? payload : options.tamper(payload),
  });
}

export async function orderRow(gateway: TestGateway, orderId: string) {
  return gateway.services.store.db
    .selectFrom('payment_orders')
    .selectAll()
    .where('id', '=', orderId)
    .executeTakeFirstOrThrow();
}

export async function storedEventIds(gateway: TestGateway): Promise<string[]> {
  const rows = await gateway.services.store.db
    .selectFrom('payment_events')
    .select('event_id')
    .orderBy('event_id')
    .execute();
  return rows.map((row) => row.event_id);
}
