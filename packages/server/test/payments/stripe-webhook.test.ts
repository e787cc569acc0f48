import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { consoleCall } from '../console/console-member.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  deliver,
  fakeStripeNetwork,
  openOrder,
  orderRow,
  sessionEvent,
  storedEventIds,
} from './stripe-harness.js';

const HUNDRED_YUAN = 100_000_000;

describeEachDialect('Stripe webhook on $name', (dialect) => {
  let gateway: TestGateway;
  beforeEach(async () => {
    gateway = await startGateway(dialect, { services: { stripe: fakeStripeNetwork().settings } });
  });
  afterEach(async () => gateway.close());

  it('a signed payment credits the order once, journalled as a top-up; a replay and a second "paid" event credit nothing', async () => {
    const order = await openOrder(gateway, HUNDRED_YUAN);
    const paid = sessionEvent('evt_paid', 'checkout.session.completed', order);
    const first = await deliver(gateway, paid);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ received: true, outcome: 'credited' });
    expect((await gateway.balance(order.accountId)).balance).toBe(HUNDRED_YUAN);

    const replay = await deliver(gateway, paid);
    expect(replay.statusCode).toBe(200);
    expect(replay.json()).toEqual({ received: true, outcome: 'replayed' });
    const alsoPaid = await deliver(
      gateway,
      sessionEvent('evt_async_paid', 'checkout.session.async_payment_succeeded', order),
    );
    expect(alsoPaid.json()).toMatchObject({ outcome: 'already_paid' });
    expect((await gateway.balance(order.accountId)).balance).toBe(HUNDRED_YUAN);

    expect((await orderRow(gateway, order.orderId)).state).toBe('paid');
    const journal = await gateway.services.store.db
      .selectFrom('journal')
      .innerJoin('topups', 'topups.id', 'journal.topup_id')
      .select(['journal.kind', 'journal.balance_delta', 'topups.source', 'topups.reference'])
      .where('journal.account_id', '=', order.accountId)
      .execute();
    expect(journal).toEqual([
      {
        kind: 'topup',
        balance_delta: HUNDRED_YUAN,
        source: 'payment',
        reference: `payment:${order.orderId}`,
      },
    ]);
    expect(await storedEventIds(gateway)).toEqual(['evt_async_paid', 'evt_paid']);
    const listed = await consoleCall(gateway, 'GET', '/console/api/topups', {
      signed: order.member.signed,
    });
    expect(listed.json()).toMatchObject({
      data: [{ id: order.orderId, state: 'paid', amount: HUNDRED_YUAN, checkout_url: null }],
      payments: { enabled: true, provider: 'stripe', currency: 'cny' },
    });
    await gateway.expectLedgerClean();
  });

  it('a forged or tampered webhook is 400 and stores and credits nothing; the genuine one still credits after', async () => {
    const order = await openOrder(gateway, HUNDRED_YUAN);
    const paid = sessionEvent('evt_paid', 'checkout.session.completed', order);
    const forged = await deliver(gateway, paid, { secret: 'whsec_guessed_by_an_attacker' });
    expect(forged.statusCode).toBe(400);
    expect(forged.json()).toMatchObject({
      error: { code: 'INVALID_INPUT', param: 'Stripe-Signature' },
    });
    const tampered = await deliver(gateway, paid, {
      tamper: (payload) => payload.replace('"amount_total":10000', '"amount_total":99999999'),
    });
    expect(tampered.statusCode).toBe(400);
    const stale = await deliver(gateway, paid, {
      timestampSeconds: Math.floor(gateway.services.clock.now() / 1000) - 3600,
    });
    expect(stale.statusCode).toBe(400);
    const unsigned = await gateway.app.inject({
      method: 'POST',
      url: '/payments/stripe/webhook',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(paid),
    });
    expect(unsigned.statusCode).toBe(400);
    expect(await storedEventIds(gateway)).toEqual([]);
    expect((await gateway.balance(order.accountId)).balance).toBe(0);
    expect((await orderRow(gateway, order.orderId)).state).toBe('created');

    expect((await deliver(gateway, paid)).json()).toMatchObject({ outcome: 'credited' });
    expect((await gateway.balance(order.accountId)).balance).toBe(HUNDRED_YUAN);
    await gateway.expectLedgerClean();
  });

  it('a reported amount or currency other than the order credits nothing, and the order is flagged for operators', async () => {
    const order = await openOrder(gateway, HUNDRED_YUAN);
    const short = await deliver(
      gateway,
      sessionEvent('evt_short', 'checkout.session.completed', order, { amount_total: 9_999 }),
    );
    expect(short.statusCode).toBe(200);
    expect(short.json()).toMatchObject({ outcome: 'amount_mismatch' });
    expect((await gateway.balance(order.accountId)).balance).toBe(0);
    const row = await orderRow(gateway, order.orderId);
    expect(row.state).toBe('amount_mismatch');
    expect(row.flag).toContain('99990000');

    const other = await openOrder(gateway, HUNDRED_YUAN, order.member);
    const dollars = await deliver(
      gateway,
      sessionEvent('evt_usd', 'checkout.session.completed', other, { currency: 'usd' }),
    );
    expect(dollars.json()).toMatchObject({ outcome: 'amount_mismatch' });
    expect((await gateway.balance(order.accountId)).balance).toBe(0);

    const audit = await gateway.services.audit.list({ action: 'payment.flagged' });
    expect(audit.data.map((event) => event.target_id).sort()).toEqual(
      [order.orderId, other.orderId].sort(),
    );
    expect(audit.data[0]?.actor).toMatchObject({ kind: 'payment_provider', id: 'stripe' });
    await gateway.expectLedgerClean();
  });

  it('an event signed by Stripe that names the order for another checkout session credits nothing and is flagged', async () => {
    const order = await openOrder(gateway, HUNDRED_YUAN);
    const elsewhere = await deliver(
      gateway,
      sessionEvent('evt_elsewhere', 'checkout.session.completed', {
        ...order,
        sessionId: 'cs_test_of_another_integration',
      }),
    );
    expect(elsewhere.json()).toMatchObject({ outcome: 'session_mismatch' });
    expect((await gateway.balance(order.accountId)).balance).toBe(0);
    const row = await orderRow(gateway, order.orderId);
    expect(row.state).toBe('created');
    expect(row.flag).toContain('another session');
    const unknown = await deliver(
      gateway,
      sessionEvent('evt_unknown', 'checkout.session.completed', { ...order, orderId: 'pay_none' }),
    );
    expect(unknown.json()).toMatchObject({ outcome: 'unknown_order' });
    expect((await gateway.balance(order.accountId)).balance).toBe(0);
  });

  it('reordered events: an expiry after the payment changes nothing; a failed or expired checkout credits nothing', async () => {
    const order = await openOrder(gateway, HUNDRED_YUAN);
    await deliver(gateway, sessionEvent('evt_paid', 'checkout.session.completed', order));
    const lateExpiry = await deliver(
      gateway,
      sessionEvent('evt_expired', 'checkout.session.expired', order),
    );
    expect(lateExpiry.json()).toMatchObject({ outcome: 'already_paid' });
    expect((await orderRow(gateway, order.orderId)).state).toBe('paid');

    const expired = await openOrder(gateway, HUNDRED_YUAN, order.member);
    expect(
      (
        await deliver(gateway, sessionEvent('evt_exp2', 'checkout.session.expired', expired))
      ).json(),
    ).toMatchObject({ outcome: 'expired' });
    const failed = await openOrder(gateway, HUNDRED_YUAN, order.member);
    expect(
      (
        await deliver(
          gateway,
          sessionEvent('evt_fail', 'checkout.session.async_payment_failed', failed),
        )
      ).json(),
    ).toMatchObject({ outcome: 'failed' });
    const pending = await openOrder(gateway, HUNDRED_YUAN, order.member);
    expect(
      (
        await deliver(
          gateway,
          sessionEvent('evt_pending', 'checkout.session.completed', pending, {
            payment_status: 'unpaid',
          }),
        )
      ).json(),
    ).toMatchObject({ outcome: 'ignored' });
    expect((await gateway.balance(order.accountId)).balance).toBe(HUNDRED_YUAN);
    expect((await orderRow(gateway, expired.orderId)).state).toBe('expired');
    expect((await orderRow(gateway, failed.orderId)).state).toBe('failed');
    expect((await orderRow(gateway, pending.orderId)).state).toBe('created');

    // Stripe's word that the money arrived wins over an earlier expiry: paid, credited once.
    const paidLate = await deliver(
      gateway,
      sessionEvent('evt_paid_late', 'checkout.session.completed', expired),
    );
    expect(paidLate.json()).toMatchObject({ outcome: 'credited' });
    expect((await gateway.balance(order.accountId)).balance).toBe(2 * HUNDRED_YUAN);
    await gateway.expectLedgerClean();
  });

  it('a webhook whose credit fails answers 500 and keeps nothing; the redelivery credits once', async () => {
    const order = await openOrder(gateway, HUNDRED_YUAN);
    const paid = sessionEvent('evt_paid', 'checkout.session.completed', order);
    const credit = vi
      .spyOn(gateway.services.accounts, 'topUpWithin')
      .mockRejectedValueOnce(new Error('the disk is full'));
    const failed = await deliver(gateway, paid);
    expect(failed.statusCode).toBe(500);
    expect(failed.json()).toMatchObject({ error: { code: 'INTERNAL_ERROR' } });
    expect(failed.body).not.toContain('disk');
    expect(await storedEventIds(gateway)).toEqual([]);
    expect((await orderRow(gateway, order.orderId)).state).toBe('created');
    expect((await gateway.balance(order.accountId)).balance).toBe(0);

    const redelivered = await deliver(gateway, paid);
    expect(redelivered.statusCode).toBe(200);
    expect(redelivered.json()).toMatchObject({ outcome: 'credited' });
    expect((await deliver(gateway, paid)).json()).toMatchObject({ outcome: 'replayed' });
    expect(credit).toHaveBeenCalledTimes(2);
    expect((await gateway.balance(order.accountId)).balance).toBe(HUNDRED_YUAN);
    await gateway.expectLedgerClean();
  });

  it('events Tollgate does not act on are stored and answered 200 (Stripe stops sending them)', async () => {
    const response = await deliver(gateway, {
      id: 'evt_customer',
      object: 'event',
      type: 'customer.created',
      data: { object: { id: 'cus_1', object: 'customer' } },
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ received: true, outcome: 'ignored' });
    expect(await storedEventIds(gateway)).toEqual(['evt_customer']);
  });
});
