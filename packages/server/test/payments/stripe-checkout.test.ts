import { MAX_MOVEMENT_MICRO_YUAN } from '@tollgate/protocol';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { consoleCall, signedInMember } from '../console/console-member.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  deliver,
  fakeStripeNetwork,
  openOrder,
  sessionEvent,
  SECRET_KEY,
} from './stripe-harness.js';

describeEachDialect('Stripe checkout on $name', (dialect) => {
  let gateway: TestGateway;
  let stripe: ReturnType<typeof fakeStripeNetwork>;
  beforeEach(async () => {
    stripe = fakeStripeNetwork();
    gateway = await startGateway(dialect, { services: { stripe: stripe.settings } });
  });
  afterEach(async () => gateway.close());

  it('opening a top-up sends Stripe the amount in fen, CNY, card/Alipay/WeChat Pay and the order id; the member gets the checkout URL', async () => {
    const member = await signedInMember(gateway);
    const response = await consoleCall(gateway, 'POST', '/console/api/topups', {
      signed: member.signed,
      body: { amount: 123_450_000 },
      headers: { host: 'gateway.example.test' },
    });
    expect(response.statusCode).toBe(201);
    const body = response.json<{ order: { id: string }; checkout_url: string }>();
    expect(body).toMatchObject({
      order: {
        object: 'payment_order',
        account_id: member.accountId,
        amount: 123_450_000,
        currency: 'cny',
        state: 'created',
        provider: 'stripe',
      },
      checkout_url: 'https://checkout.stripe.com/c/pay/cs_test_1',
    });
    expect(stripe.sent).toHaveLength(1);
    const [sent] = stripe.sent;
    expect(sent?.method).toBe('POST');
    expect(sent?.url).toBe('https://api.stripe.com/v1/checkout/sessions');
    expect(sent?.headers['authorization']).toBe(`Bearer ${SECRET_KEY}`);
    expect(sent?.headers['idempotency-key']).toBe(`checkout-${body.order.id}`);
    const form = Object.fromEntries(sent?.form ?? []);
    expect(form).toMatchObject({
      mode: 'payment',
      currency: 'cny',
      'line_items[0][price_data][unit_amount]': '12345',
      'line_items[0][price_data][currency]': 'cny',
      'line_items[0][quantity]': '1',
      'allowed_payment_method_types[0]': 'card',
      'allowed_payment_method_types[1]': 'alipay',
      'allowed_payment_method_types[2]': 'wechat_pay',
      'payment_method_options[wechat_pay][client]': 'web',
      client_reference_id: body.order.id,
      'metadata[order_id]': body.order.id,
      'metadata[account_id]': member.accountId,
      'payment_intent_data[metadata][order_id]': body.order.id,
      success_url: `http://gateway.example.test/console/topup?order=${body.order.id}&result=paid`,
    });
    const listed = await consoleCall(gateway, 'GET', '/console/api/topups', {
      signed: member.signed,
    });
    expect(listed.json()).toMatchObject({
      object: 'list',
      data: [{ id: body.order.id, state: 'created', checkout_url: body.checkout_url }],
    });
  });

  it('an amount outside a top-up’s bounds or not a whole fen is refused naming amount, and no order or Stripe call is made', async () => {
    const member = await signedInMember(gateway);
    for (const amount of [0, -10_000, 12_345, 1.5, '100', MAX_MOVEMENT_MICRO_YUAN + 10_000, null]) {
      const response = await consoleCall(gateway, 'POST', '/console/api/topups', {
        signed: member.signed,
        body: { amount },
      });
      expect(response.statusCode, String(amount)).toBe(400);
      expect(response.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'amount' } });
    }
    expect(stripe.sent).toEqual([]);
    const orders = await gateway.services.store.db
      .selectFrom('payment_orders')
      .selectAll()
      .execute();
    expect(orders).toEqual([]);
  });

  it('Stripe failing to open the checkout answers 502 and leaves the order failed, never payable', async () => {
    const member = await signedInMember(gateway);
    stripe.goDown();
    const response = await consoleCall(gateway, 'POST', '/console/api/topups', {
      signed: member.signed,
      body: { amount: 10_000_000 },
    });
    expect(response.statusCode).toBe(502);
    expect(response.json()).toMatchObject({ error: { code: 'UPSTREAM_ERROR' } });
    const listed = await consoleCall(gateway, 'GET', '/console/api/topups', {
      signed: member.signed,
    });
    expect(listed.json()).toMatchObject({ data: [{ state: 'failed', checkout_url: null }] });
  });

  it('a member sees only their account’s orders; without CSRF no order is opened; an API key opens nothing', async () => {
    const first = await openOrder(gateway, 10_000_000);
    const other = await signedInMember(gateway);
    const otherList = await consoleCall(gateway, 'GET', '/console/api/topups', {
      signed: other.signed,
    });
    expect(otherList.json()).toMatchObject({ data: [] });
    const noCsrf = await consoleCall(gateway, 'POST', '/console/api/topups', {
      signed: other.signed,
      csrf: false,
      body: { amount: 10_000_000 },
    });
    expect(noCsrf.statusCode).toBe(403);
    const withKey = await gateway.app.inject({
      method: 'POST',
      url: '/console/api/topups',
      headers: { authorization: `Bearer ${first.member.key}` },
      payload: { amount: 10_000_000 },
    });
    expect(withKey.statusCode).toBe(401);
    expect(stripe.sent).toHaveLength(1);
    // The other member's session cannot be used to credit: only a signed webhook does.
    expect((await gateway.balance(other.accountId)).balance).toBe(0);
  });

  it('a webhook body over the limit is refused before it is read (413)', async () => {
    const response = await gateway.app.inject({
      method: 'POST',
      url: '/payments/stripe/webhook',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=x' },
      payload: 'x'.repeat(300 * 1024),
    });
    expect(response.statusCode).toBe(413);
  });
});

describeEachDialect('online top-up without Stripe on $name', (dialect) => {
  let gateway: TestGateway;
  beforeEach(async () => {
    gateway = await startGateway(dialect);
  });
  afterEach(async () => gateway.close());

  it('says it is not configured, stores nothing, and redemption codes keep working', async () => {
    const member = await signedInMember(gateway);
    const listed = await consoleCall(gateway, 'GET', '/console/api/topups', {
      signed: member.signed,
    });
    expect(listed.json()).toMatchObject({ data: [], payments: { enabled: false } });
    const start = await consoleCall(gateway, 'POST', '/console/api/topups', {
      signed: member.signed,
      body: { amount: 10_000_000 },
    });
    expect(start.statusCode).toBe(400);
    expect(start.json<{ error: { message: string } }>().error.message).toContain('not configured');
    const webhook = await deliver(
      gateway,
      sessionEvent('evt_x', 'checkout.session.completed', {
        orderId: 'pay_x',
        sessionId: 'cs_x',
        amount: 10_000_000,
        accountId: member.accountId,
      }),
    );
    expect(webhook.statusCode).toBe(400);
    const code = await gateway.services.accounts.createRedemptionCode({ amount: 5_000_000 });
    const redeemed = await consoleCall(gateway, 'POST', '/console/api/redemptions', {
      signed: member.signed,
      body: { code: code.code },
    });
    expect(redeemed.statusCode).toBe(200);
    expect((await gateway.balance(member.accountId)).balance).toBe(5_000_000);
    await gateway.expectLedgerClean();
  });
});
