import { afterEach, beforeEach, expect, it } from 'vitest';
import { consoleCall, signedInMember } from '../console/console-member.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { deliver, fakeStripeNetwork, sessionEvent } from './stripe-harness.js';

const HUNDRED_YUAN = 100_000_000;
const OPEN_ORDERS = 3;

/**
 * One member cannot make the provider open checkouts without bound (issue 35, item 8): at most
 * `limits.open_topups_per_account` orders await payment at once, however many requests race.
 */
describeEachDialect('a flood of top-up orders on $name', (dialect) => {
  let gateway: TestGateway;
  let stripe: ReturnType<typeof fakeStripeNetwork>;
  beforeEach(async () => {
    stripe = fakeStripeNetwork();
    const config = testConfig();
    gateway = await startGateway(dialect, {
      config: { ...config, limits: { ...config.limits, open_topups_per_account: OPEN_ORDERS } },
      services: { stripe: stripe.settings },
    });
  });
  afterEach(async () => gateway.close());

  it('40 parallel requests open only the configured number of orders; the rest are 429 and store nothing', async () => {
    const member = await signedInMember(gateway);
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        consoleCall(gateway, 'POST', '/console/api/topups', {
          signed: member.signed,
          body: { amount: HUNDRED_YUAN },
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(OPEN_ORDERS);
    expect(statuses.filter((status) => status === 429)).toHaveLength(40 - OPEN_ORDERS);
    const refused = answers.find((answer) => answer.statusCode === 429);
    expect(refused?.json()).toMatchObject({
      error: {
        code: 'RATE_LIMITED',
        message: expect.stringContaining('limits.open_topups_per_account') as string,
      },
    });
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThan(0);
    const orders = await gateway.services.store.db
      .selectFrom('payment_orders')
      .select('state')
      .where('account_id', '=', member.accountId)
      .execute();
    expect(orders).toEqual(Array.from({ length: OPEN_ORDERS }, () => ({ state: 'created' })));
    expect(stripe.sent).toHaveLength(OPEN_ORDERS);

    // Paying one frees its place; another member is not counted against this one.
    const opened = answers.find((answer) => answer.statusCode === 201);
    const body = opened?.json<{ order: { id: string }; checkout_url: string }>();
    const sessionId = body?.checkout_url.split('/').at(-1) ?? '';
    await deliver(
      gateway,
      sessionEvent('evt_paid', 'checkout.session.completed', {
        orderId: body?.order.id ?? '',
        sessionId,
        amount: HUNDRED_YUAN,
        accountId: member.accountId,
      }),
    );
    const again = await consoleCall(gateway, 'POST', '/console/api/topups', {
      signed: member.signed,
      body: { amount: HUNDRED_YUAN },
    });
    expect(again.statusCode).toBe(201);
    const other = await signedInMember(gateway);
    const others = await consoleCall(gateway, 'POST', '/console/api/topups', {
      signed: other.signed,
      body: { amount: HUNDRED_YUAN },
    });
    expect(others.statusCode).toBe(201);
    await gateway.expectLedgerClean();
  });

  it('an order older than the checkout lifetime no longer counts, even when its expiry never arrived', async () => {
    const member = await signedInMember(gateway);
    for (let index = 0; index < OPEN_ORDERS; index += 1) {
      const opened = await consoleCall(gateway, 'POST', '/console/api/topups', {
        signed: member.signed,
        body: { amount: HUNDRED_YUAN },
      });
      expect(opened.statusCode).toBe(201);
    }
    const refused = await consoleCall(gateway, 'POST', '/console/api/topups', {
      signed: member.signed,
      body: { amount: HUNDRED_YUAN },
    });
    expect(refused.statusCode).toBe(429);
    // Stripe's sessions can be paid for 24 hours: the oldest order is past that now.
    const oldest = await gateway.services.store.db
      .selectFrom('payment_orders')
      .select('id')
      .where('account_id', '=', member.accountId)
      .orderBy('created_at')
      .orderBy('id')
      .executeTakeFirstOrThrow();
    await gateway.services.store.db
      .updateTable('payment_orders')
      .set({ created_at: gateway.services.clock.now() - 25 * 60 * 60 * 1000 })
      .where('id', '=', oldest.id)
      .execute();
    const allowed = await consoleCall(gateway, 'POST', '/console/api/topups', {
      signed: member.signed,
      body: { amount: HUNDRED_YUAN },
    });
    expect(allowed.statusCode).toBe(201);
  });
});
