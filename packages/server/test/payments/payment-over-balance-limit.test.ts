import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { deliver, fakeStripeNetwork, openOrder, orderRow, sessionEvent } from './stripe-harness.js';

/** The largest single movement (10 million yuan), in micro-yuan. */
const LARGEST_MOVEMENT = 10_000_000_000_000;

/**
 * A payment whose credit would pass the maximum balance can never be credited as it stands:
 * answering 500 made the provider retry it for days, never flagged (issue 35, item 12). It is
 * recorded, answered 2xx and put in the operators' queue with the reason.
 */
describeEachDialect('a payment over the maximum balance on $name', (dialect) => {
  let gateway: TestGateway;
  beforeEach(async () => {
    gateway = await startGateway(dialect, { services: { stripe: fakeStripeNetwork().settings } });
  });
  afterEach(async () => gateway.close());

  it('a payment that would pass the maximum balance is answered 2xx, not credited, and queued for operators with the reason', async () => {
    const order = await openOrder(gateway, LARGEST_MOVEMENT);
    // 99 top-ups of the largest movement and one micro-yuan: the order no longer fits.
    for (let index = 0; index < 99; index += 1)
      await gateway.services.accounts.topUp(order.accountId, {
        amount: LARGEST_MOVEMENT,
        reference: `fill-${index}`,
      });
    await gateway.services.accounts.topUp(order.accountId, { amount: 1, reference: 'fill-last' });
    const before = await gateway.balance(order.accountId);

    const paid = sessionEvent('evt_paid', 'checkout.session.completed', order);
    const answer = await deliver(gateway, paid);
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({ received: true, outcome: 'balance_limit' });
    // A redelivery is a replay; another "paid" event of the session credits nothing either.
    expect((await deliver(gateway, paid)).json()).toMatchObject({ outcome: 'replayed' });
    const async = await deliver(
      gateway,
      sessionEvent('evt_async_paid', 'checkout.session.async_payment_succeeded', order),
    );
    expect(async.json()).toMatchObject({ outcome: 'already_balance_limit' });
    expect(await gateway.balance(order.accountId)).toEqual(before);

    const row = await orderRow(gateway, order.orderId);
    expect(row.state).toBe('balance_limit');
    expect(row.flag).toContain('above the maximum balance');
    const queue = await gateway.services.payments.listAll({ flagged: 'true' });
    expect(queue.data).toMatchObject([{ id: order.orderId, state: 'balance_limit' }]);
    const audit = await gateway.services.audit.list({ action: 'payment.flagged' });
    expect(audit.data).toMatchObject([{ target_id: order.orderId }]);
    await gateway.expectLedgerClean();
  });
});
