import { afterEach, expect, it } from 'vitest';
import { takeRefund } from '../../src/billing/account-money.js';
import { createIdGenerator, systemClock } from '../../src/util/effects.js';
import { claimedOneByOne, moneyService, succeededOutcome } from '../helpers/batched-money.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';

/**
 * What an account owes (a refund not yet taken back) is paid from the unused part of its holds
 * when they are captured, on every capture path: alone (SQLite, one capture), in a batch's
 * transaction, and never by PostgreSQL's one-statement batch, which would charge the captures
 * and leave the freed money available while the debt stays (issue 35, item 4).
 */
describeEachDialect('an owed refund paid from captures on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  it('captures finishing together pay the debt from their holds before anything is available', async () => {
    const service = await moneyService(dialect, 100);
    gateway = service.gateway;
    const db = gateway.services.store.db;
    const claims = await claimedOneByOne(service, 5, 20);
    // A refund of 50 arrives while all 100 are held: nothing can be taken, all 50 are owed.
    await db
      .insertInto('payment_orders')
      .values({
        id: 'pay_refunded',
        account_id: service.accountId,
        provider: 'stripe',
        amount: 50,
        currency: 'cny',
        state: 'refunded',
        provider_session_id: null,
        provider_payment_id: null,
        checkout_url: null,
        refunded_amount: 50,
        refund_owed: 50,
        flag: null,
        created_at: 0,
        updated_at: 0,
      })
      .execute();
    const effects = { clock: systemClock, ids: createIdGenerator() };
    const taken = await db
      .transaction()
      .execute((trx) =>
        takeRefund(trx, effects, { accountId: service.accountId, amount: 50, reason: 'test' }),
      );
    expect(taken).toEqual({ taken: 0, owed: 50 });
    await gateway.expectLedgerClean();

    // Each capture charges 3 of its 20: 85 are freed, of which 50 pay the debt first.
    const answers = await Promise.all(
      claims.map(({ identity, holdId }) =>
        service.requests.finish(identity, holdId, succeededOutcome(3)),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(claims.map(() => 200));
    const account = await db
      .selectFrom('accounts')
      .select(['balance', 'held', 'owed'])
      .where('id', '=', service.accountId)
      .executeTakeFirstOrThrow();
    expect(account).toEqual({ balance: 35, held: 0, owed: 0 });
  });
});
