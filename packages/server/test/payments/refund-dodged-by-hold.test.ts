import { afterEach, beforeEach, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { consoleCall, signedInMember } from '../console/console-member.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { finishedTask, settleBodyOf, type TaskBody } from '../helpers/tasks.js';
import {
  deliver,
  fakeStripeNetwork,
  openOrder,
  refundEvent,
  sessionEvent,
} from './stripe-harness.js';

const YUAN = 1_000_000;

/** The default models, with a one-second 320x240 video reserving exactly 8 yuan. */
function eightYuanVideoConfig() {
  return testConfig({
    models: defaultConfig.models.map((model) =>
      model.id === 'sim-video'
        ? {
            ...model,
            prices: {
              per_second: { '320x240': 8 * YUAN, '640x360': 8 * YUAN, '1280x720': 8 * YUAN },
              per_second_with_audio: {
                '320x240': 8 * YUAN,
                '640x360': 8 * YUAN,
                '1280x720': 8 * YUAN,
              },
              per_reference_image: 10_000,
            },
          }
        : model,
    ),
  });
}

interface Money {
  balance: number;
  held: number;
  available: number;
  owed: number;
}

/**
 * A refund cannot be dodged by holding the balance in a task when it arrives (issue 35, item 4):
 * what it could not take stays owed, is shown to the member and the operator, and is taken from
 * the next money that becomes available: the hold's release, or a top-up.
 */
describeEachDialect('a refund dodged by parking the money in a hold, on $name', (dialect) => {
  let gateway: TestGateway;
  beforeEach(async () => {
    gateway = await startGateway(dialect, {
      config: eightYuanVideoConfig(),
      services: { stripe: fakeStripeNetwork().settings },
    });
  });
  afterEach(async () => gateway.close());

  /** Ten yuan paid online, then eight of it held by a video task not yet worked. */
  async function tenYuanWithEightHeld(prompt: string) {
    const member = await signedInMember(gateway);
    const order = await openOrder(gateway, 10 * YUAN, member);
    const paid = await deliver(
      gateway,
      sessionEvent('evt_paid', 'checkout.session.completed', order),
    );
    expect(paid.json()).toMatchObject({ outcome: 'credited' });
    const created = await gateway.call('POST', '/v1/videos', {
      key: member.key,
      body: { model: 'sim-video', prompt, seconds: 1, size: '320x240' },
    });
    expect(created.statusCode, created.body).toBe(202);
    const task = created.json<TaskBody>();
    expect(task.billing.reserved_amount).toBe(8 * YUAN);
    return { member, order, path: `/v1/videos/${task.id}` };
  }

  /** The account as the member's console and the operator's admin API show it. */
  async function shown(member: Awaited<ReturnType<typeof signedInMember>>): Promise<Money> {
    const console = await consoleCall(gateway, 'GET', '/console/api/account', {
      signed: member.signed,
    });
    expect(console.statusCode).toBe(200);
    const admin = await gateway.admin('GET', `/admin/v1/accounts/${member.accountId}`);
    const pick = ({ balance, held, available, owed }: Money) => ({
      balance,
      held,
      available,
      owed,
    });
    expect(pick(admin as unknown as Money)).toEqual(pick(console.json<Money>()));
    return pick(console.json<Money>());
  }

  it('takes what is available now, keeps the rest owed, and takes it from the hold once released', async () => {
    const { member, order, path } = await tenYuanWithEightHeld('storm [sim:task=fail]');
    expect(await shown(member)).toEqual({
      balance: 10 * YUAN,
      held: 8 * YUAN,
      available: 2 * YUAN,
      owed: 0,
    });

    const refund = await deliver(gateway, refundEvent('evt_refund', order, 1_000));
    expect(refund.json()).toMatchObject({ outcome: 'refund_owed' });
    expect(await shown(member)).toEqual({
      balance: 8 * YUAN,
      held: 8 * YUAN,
      available: 0,
      owed: 8 * YUAN,
    });
    await gateway.expectLedgerClean();

    // The task fails: its hold is released, and the money freed pays what is owed first.
    const task = await finishedTask(gateway, member.key, path);
    expect(task).toMatchObject({ status: 'failed', billing: { state: 'released' } });
    expect(await shown(member)).toEqual({ balance: 0, held: 0, available: 0, owed: 0 });
    const refunds = await gateway.services.store.db
      .selectFrom('journal')
      .select(['balance_delta', 'owed_delta'])
      .where('account_id', '=', member.accountId)
      .where('kind', '=', 'refund')
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    expect(refunds).toEqual([
      { balance_delta: -2 * YUAN, owed_delta: 8 * YUAN },
      { balance_delta: -8 * YUAN, owed_delta: -8 * YUAN },
    ]);
    await gateway.expectLedgerClean();
  });

  it('what a spent hold never gave back stays owed, and the next top-up pays it first', async () => {
    const { member, order, path } = await tenYuanWithEightHeld('harbour at dusk');
    await deliver(gateway, refundEvent('evt_refund', order, 1_000));
    // The task succeeds: its eight yuan are charged, nothing is freed, the debt stays.
    const task = await finishedTask(gateway, member.key, path);
    expect(task.status).toBe('succeeded');
    const settled = await gateway.call('POST', `${path}/settle`, {
      key: member.key,
      body: settleBodyOf(task),
    });
    expect(settled.statusCode, settled.body).toBe(200);
    expect(await shown(member)).toEqual({ balance: 0, held: 0, available: 0, owed: 8 * YUAN });
    await gateway.expectLedgerClean();

    // A redemption credits 5 yuan: all of it pays the debt.
    const [code] = await gateway.services.accounts.createRedemptionCodes({
      amount: 5 * YUAN,
      count: 1,
    });
    await gateway.services.accounts.redeem(member.accountId, { code: code?.code });
    expect(await shown(member)).toEqual({ balance: 0, held: 0, available: 0, owed: 3 * YUAN });

    // A paid top-up of 20 yuan pays the remaining 3 first; 17 are the member's.
    const second = await openOrder(gateway, 20 * YUAN, member);
    const paid = await deliver(
      gateway,
      sessionEvent('evt_paid_again', 'checkout.session.completed', second),
    );
    expect(paid.json()).toMatchObject({ outcome: 'credited' });
    expect(await shown(member)).toEqual({
      balance: 17 * YUAN,
      held: 0,
      available: 17 * YUAN,
      owed: 0,
    });
    await gateway.expectLedgerClean();
  });
});
