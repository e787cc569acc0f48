import { sql } from 'kysely';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { describeOnPostgres } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  deliver,
  fakeStripeNetwork,
  openOrder,
  orderRow,
  refundEvent,
  sessionEvent,
} from './stripe-harness.js';

const HUNDRED_YUAN = 100_000_000;

/**
 * Distinct events of one checkout session delivered at the same moment (two instances, or
 * Stripe's `completed` and `async_payment_succeeded` together): the one that loses the race to
 * move the order used to roll back and answer 500 (issue 35, item 10). It now answers the
 * outcome already decided, and the newer refund total still applies. PostgreSQL only: SQLite's
 * writers are serialised, so no two events ever read the same order state there.
 *
 * The race is made certain: a transaction of the test holds the order's row while both
 * deliveries read the order and wait on its row to move it; it then commits, and one of them
 * moves it first.
 */
describeOnPostgres('webhook races between events of one session on $name', (dialect) => {
  let gateway: TestGateway;
  beforeEach(async () => {
    gateway = await startGateway(dialect, { services: { stripe: fakeStripeNetwork().settings } });
  });
  afterEach(async () => gateway.close());

  /** Delivers `events` together while the order's row is held, then lets them race for it. */
  async function racing(orderId: string, events: unknown[]): Promise<LightMyRequestResponse[]> {
    const db = gateway.services.store.db;
    let deliveries: Promise<LightMyRequestResponse>[] = [];
    await db.transaction().execute(async (blocker) => {
      await blocker
        .updateTable('payment_orders')
        .set((eb) => ({ state: eb.ref('state') }))
        .where('id', '=', orderId)
        .execute();
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(blocker);
      const pid = rows[0]?.pid;
      // `inject` starts once awaited: `then` now, so both run while the row is held.
      deliveries = events.map((event) => deliver(gateway, event).then((answer) => answer));
      const deadline = Date.now() + 10_000;
      for (;;) {
        // Waiting on the held row, or on the delivery queued first for it.
        const waiting = await sql<{ count: string }>`select count(*) as count
          from pg_stat_activity waiter
          where ${pid} = any(pg_blocking_pids(waiter.pid)) or exists (
            select 1 from pg_stat_activity first
            where first.pid = any(pg_blocking_pids(waiter.pid))
              and ${pid} = any(pg_blocking_pids(first.pid)))`.execute(db);
        if (Number(waiting.rows[0]?.count) >= events.length) break;
        if (Date.now() > deadline) throw new Error('the deliveries never waited on the order');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });
    return Promise.all(deliveries);
  }

  it('two "paid" events of one session at once: one credits, the other answers already_paid', async () => {
    const order = await openOrder(gateway, HUNDRED_YUAN);
    const answers = await racing(order.orderId, [
      sessionEvent('evt_completed', 'checkout.session.completed', order),
      sessionEvent('evt_async', 'checkout.session.async_payment_succeeded', order),
    ]);
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200]);
    expect(answers.map((answer) => answer.json<{ outcome: string }>().outcome).sort()).toEqual([
      'already_paid',
      'credited',
    ]);
    expect((await gateway.balance(order.accountId)).balance).toBe(HUNDRED_YUAN);
    const events = await gateway.services.store.db
      .selectFrom('payment_events')
      .select('outcome')
      .orderBy('outcome')
      .execute();
    expect(events).toEqual([{ outcome: 'already_paid' }, { outcome: 'credited' }]);
    await gateway.expectLedgerClean();
  });

  it('an expiry racing the payment is never a 500, and the payment is credited once', async () => {
    const order = await openOrder(gateway, HUNDRED_YUAN);
    const answers = await racing(order.orderId, [
      sessionEvent('evt_completed', 'checkout.session.completed', order),
      sessionEvent('evt_expired', 'checkout.session.expired', order),
    ]);
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200]);
    const outcomes = answers.map((answer) => answer.json<{ outcome: string }>().outcome);
    const state = (await orderRow(gateway, order.orderId)).state;
    // Whichever moved first decided: paid then "already_paid", or expired then a late payment.
    expect(
      state === 'paid' && outcomes.includes('credited') && !outcomes.includes('already_created'),
    ).toBe(true);
    expect((await gateway.balance(order.accountId)).balance).toBe(HUNDRED_YUAN);
    await gateway.expectLedgerClean();
  });

  it('two refund totals at once: no 500, and the newer total is what was refunded', async () => {
    const order = await openOrder(gateway, HUNDRED_YUAN);
    await deliver(gateway, sessionEvent('evt_paid', 'checkout.session.completed', order));
    const answers = await racing(order.orderId, [
      refundEvent('evt_refund_3', order, 300),
      refundEvent('evt_refund_5', order, 500),
    ]);
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200]);
    expect(await orderRow(gateway, order.orderId)).toMatchObject({
      state: 'refunded_partially',
      refunded_amount: 5_000_000,
    });
    expect((await gateway.balance(order.accountId)).balance).toBe(HUNDRED_YUAN - 5_000_000);
    await gateway.expectLedgerClean();
  });
});
