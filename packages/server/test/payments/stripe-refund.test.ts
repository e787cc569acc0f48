import { afterEach, beforeEach, expect, it } from 'vitest';
import { checkLedger } from '../../src/billing/ledger-check.js';
import { consoleCall, signedInMember } from '../console/console-member.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { embeddingsOnlyConfig, startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  deliver,
  fakeStripeNetwork,
  openOrder,
  orderRow,
  refundEvent,
  sessionEvent,
} from './stripe-harness.js';

const TEN_YUAN = 10_000_000;
/** A tenth of a yuan per token: one small embeddings request spends part of the payment. */
const TENTH_YUAN_PER_TOKEN = 100_000_000_000;

describeEachDialect('Stripe refunds on $name', (dialect) => {
  let gateway: TestGateway;
  beforeEach(async () => {
    gateway = await startGateway(dialect, {
      config: embeddingsOnlyConfig(TENTH_YUAN_PER_TOKEN),
      services: { stripe: fakeStripeNetwork().settings },
    });
  });
  afterEach(async () => gateway.close());

  async function paidOrder() {
    const member = await signedInMember(gateway);
    const order = await openOrder(gateway, TEN_YUAN, member);
    const paid = await deliver(
      gateway,
      sessionEvent('evt_paid', 'checkout.session.completed', order),
    );
    expect(paid.json()).toMatchObject({ outcome: 'credited' });
    return { order, key: member.key };
  }

  it('a partial refund is taken back and journalled; an older running total delivered late takes nothing more', async () => {
    const { order } = await paidOrder();
    const partial = await deliver(gateway, refundEvent('evt_refund_3', order, 300));
    expect(partial.json()).toMatchObject({ outcome: 'refund_debited' });
    expect((await gateway.balance(order.accountId)).balance).toBe(TEN_YUAN - 3_000_000);
    const older = await deliver(gateway, refundEvent('evt_refund_1', order, 100));
    expect(older.json()).toMatchObject({ outcome: 'refund_already_applied' });
    expect((await gateway.balance(order.accountId)).balance).toBe(TEN_YUAN - 3_000_000);
    const row = await orderRow(gateway, order.orderId);
    expect(row).toMatchObject({
      state: 'refunded_partially',
      refunded_amount: 3_000_000,
      refund_owed: 0,
      flag: null,
    });
    const journal = await gateway.services.store.db
      .selectFrom('journal')
      .select(['kind', 'balance_delta'])
      .where('account_id', '=', order.accountId)
      .where('kind', '=', 'refund')
      .execute();
    expect(journal).toEqual([{ kind: 'refund', balance_delta: -3_000_000 }]);
    const audit = await gateway.services.audit.list({ action: 'payment.refund' });
    expect(audit.data).toMatchObject([{ target_id: order.orderId, amount: 3_000_000 }]);
    await gateway.expectLedgerClean();
  });

  it('a refund of money already spent never takes the balance below zero: the rest is owed by the account and flagged', async () => {
    const { order, key } = await paidOrder();
    const spend = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'hello world' },
    });
    expect(spend.statusCode).toBe(200);
    const left = (await gateway.balance(order.accountId)).balance;
    const spent = TEN_YUAN - left;
    expect(spent).toBeGreaterThan(0);

    const full = await deliver(gateway, refundEvent('evt_refund_all', order, TEN_YUAN / 10_000));
    expect(full.json()).toMatchObject({ outcome: 'refund_owed' });
    expect(await gateway.balance(order.accountId)).toEqual({ balance: 0, held: 0, available: 0 });
    const row = await orderRow(gateway, order.orderId);
    expect(row).toMatchObject({ state: 'refunded', refunded_amount: TEN_YUAN, refund_owed: spent });
    expect(row.flag).toContain(`${spent} of it could not be taken back`);

    const operator = await gateway.services.consoleUsers.invite({
      email: 'ops@example.test',
      role: 'operator',
    });
    const token = operator.invite_url.split('/').at(-1) ?? '';
    await gateway.app.inject({
      method: 'POST',
      url: `/console/api/invitations/${token}`,
      payload: { password: 'correct horse battery' },
    });
    const signIn = await gateway.app.inject({
      method: 'POST',
      url: '/console/api/session',
      payload: { email: 'ops@example.test', password: 'correct horse battery' },
    });
    const cookie = String(signIn.headers['set-cookie']).split(';')[0] ?? '';
    const flagged = await gateway.app.inject({
      method: 'GET',
      url: '/console/api/admin/payment-orders?flagged=true',
      headers: { cookie },
    });
    expect(flagged.statusCode).toBe(200);
    expect(flagged.json()).toMatchObject({
      data: [{ id: order.orderId, state: 'refunded', refund_owed: spent }],
    });
    await gateway.expectLedgerClean();
  });

  it('a late refund event of a fully refunded order refunds nothing, changes nothing and keeps its flag', async () => {
    const { order, key } = await paidOrder();
    const spend = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'hello world' },
    });
    expect(spend.statusCode).toBe(200);
    const full = await deliver(gateway, refundEvent('evt_refund_all', order, TEN_YUAN / 10_000));
    expect(full.json()).toMatchObject({ outcome: 'refund_owed' });
    const before = await orderRow(gateway, order.orderId);
    expect(before.flag).toContain('could not be taken back');
    const balance = await gateway.balance(order.accountId);
    const audited = (await gateway.services.audit.list({ limit: 100 })).data.length;

    // Stripe's earlier running total (a partial refund) and the full one again, delivered late
    // under their own event ids: both already applied.
    for (const [id, fen] of [
      ['evt_refund_older', 300],
      ['evt_refund_again', TEN_YUAN / 10_000],
    ] as const) {
      const late = await deliver(gateway, refundEvent(id, order, fen));
      expect(late.statusCode).toBe(200);
      expect(late.json()).toMatchObject({ outcome: 'refund_already_applied' });
    }
    expect(await orderRow(gateway, order.orderId)).toEqual(before);
    expect(await gateway.balance(order.accountId)).toEqual(balance);
    expect((await gateway.services.audit.list({ limit: 100 })).data).toHaveLength(audited);
    await gateway.expectLedgerClean();
  });

  it('a refund of an order never credited takes nothing and is flagged', async () => {
    const member = await signedInMember(gateway);
    const order = await openOrder(gateway, TEN_YUAN, member);
    await deliver(
      gateway,
      sessionEvent('evt_short', 'checkout.session.completed', order, { amount_total: 1 }),
    );
    const refund = await deliver(gateway, refundEvent('evt_refund', order, 1));
    expect(refund.json()).toMatchObject({ outcome: 'refund_uncredited' });
    expect((await gateway.balance(order.accountId)).balance).toBe(0);
    expect((await orderRow(gateway, order.orderId)).flag).toContain('never credited');
    const members = await consoleCall(gateway, 'GET', '/console/api/admin/payment-orders', {
      signed: member.signed,
    });
    expect(members.statusCode).toBe(403);
    await gateway.expectLedgerClean();
  });

  it('the ledger check finds a refund taken from a balance that no order accounts for', async () => {
    const { order } = await paidOrder();
    await deliver(gateway, refundEvent('evt_refund', order, 100));
    // A refund recorded on the order but not taken from the balance (a writer that skipped it).
    await gateway.services.store.db
      .updateTable('payment_orders')
      .set({ refunded_amount: 2_000_000 })
      .where('id', '=', order.orderId)
      .execute();
    const report = await checkLedger(gateway.services.store.db);
    expect(report.violations).toEqual([
      expect.objectContaining({ invariant: 'refunds_match_orders' }),
    ]);
  });
});
