import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { deliver, fakeStripeNetwork, openOrder, orderRow, sessionEvent } from './stripe-harness.js';

const HUNDRED_YUAN = 100_000_000;

/**
 * A body signed with the webhook secret that is not an event Tollgate can read is the sender's
 * mistake, not the gateway's (issue 35, item 10): 400 naming the body, stored for the operator
 * (a `payment_events` row and an audit `payment.flagged`), and nothing else changes.
 */
describeEachDialect('signed webhook bodies that are not events on $name', (dialect) => {
  let gateway: TestGateway;
  beforeEach(async () => {
    gateway = await startGateway(dialect, { services: { stripe: fakeStripeNetwork().settings } });
  });
  afterEach(async () => gateway.close());

  it('null, an array, an event without data or a session event without its id: 400, stored once, nothing applied', async () => {
    const order = await openOrder(gateway, HUNDRED_YUAN);
    const paid = sessionEvent('evt_paid', 'checkout.session.completed', order);
    const bodies: unknown[] = [
      null,
      [],
      [paid],
      'evt_paid',
      42,
      {},
      { id: 'evt_no_data', object: 'event', type: 'checkout.session.completed' },
      { id: 'evt_null_object', object: 'event', type: 'charge.refunded', data: { object: null } },
      { ...paid, id: 'evt_session_without_id', data: { object: { ...paid.data.object, id: 7 } } },
    ];
    for (const body of bodies) {
      const answer = await deliver(gateway, body);
      expect(answer.statusCode, JSON.stringify(body)).toBe(400);
      expect(answer.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'body' } });
      // Stripe delivers it again: stored once.
      expect((await deliver(gateway, body)).statusCode).toBe(400);
    }
    const stored = await gateway.services.store.db
      .selectFrom('payment_events')
      .select(['event_id', 'type', 'outcome', 'order_id'])
      .execute();
    expect(stored).toHaveLength(bodies.length);
    for (const row of stored) {
      expect(row.event_id).toMatch(/^unusable_[0-9a-f]{32}$/);
      expect(row).toMatchObject({ outcome: 'unusable', order_id: null });
    }
    const flagged = await gateway.services.audit.list({ action: 'payment.flagged', limit: 100 });
    expect(flagged.data).toHaveLength(bodies.length);
    expect(flagged.data.map((event) => event.reason)).toContainEqual(
      expect.stringContaining('no data.object'),
    );
    expect((await gateway.balance(order.accountId)).balance).toBe(0);
    expect((await orderRow(gateway, order.orderId)).state).toBe('created');

    // The event id an unusable body claimed stays free for the readable event.
    const genuine = await deliver(gateway, paid);
    expect(genuine.json()).toMatchObject({ outcome: 'credited' });
    await gateway.expectLedgerClean();
  });
});
