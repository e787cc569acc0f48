import { afterEach, expect, it } from 'vitest';
import { captureHold, releaseHold } from '../../src/billing/ledger.js';
import { BatchedCapture } from '../../src/requests/batched-capture.js';
import type { RecordedOutcomeColumns } from '../../src/requests/outcome-columns.js';
import { systemClock } from '../../src/util/effects.js';
import {
  claimedOneByOne,
  moneyService,
  succeededOutcome,
  type ClaimedRequest,
} from '../helpers/batched-money.js';
import { describeEachDialect, describeOnPostgres, type TestDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';

/**
 * Issue 35 item 18: a hold is resolved once because every capture and release claims it with
 * `state = 'open'` in its own update. In the request paths the record's own guard (`processing`,
 * `submission_unknown`) sits in the same transaction and refuses first, so removing the hold's
 * guard failed no test. These call the money functions directly, past every record guard, and
 * prove the hold's guard alone refuses a second resolution: the transaction way (both databases)
 * and PostgreSQL's batched captures, in one statement and in one transaction. Another request of
 * the account keeps money held meanwhile, so that a second resolution would not be stopped by the
 * account's own bounds (`held` never below 0) either: without the hold's guard it would charge.
 */

const BALANCE = 1_000;
const HOLD = 100;
const CHARGE = 30;

function setUp(dialect: TestDialect, onGateway: (gateway: TestGateway) => void) {
  return moneyService(dialect, BALANCE).then((service) => {
    onGateway(service.gateway);
    return service;
  });
}

async function journalOf(gateway: TestGateway, holdId: string) {
  const lines = await gateway.services.store.db
    .selectFrom('journal')
    .select('kind')
    .where('hold_id', '=', holdId)
    .execute();
  return lines.map((line) => line.kind).sort();
}

describeEachDialect('a hold resolved once, by its own guard, on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  it('a second capture of a captured hold, in another transaction, is already_resolved and moves no money', async () => {
    const service = await setUp(dialect, (created) => (gateway = created));
    // The second keeps HOLD held throughout.
    const [claim] = await claimedOneByOne(service, 2, HOLD);
    const { identity, holdId } = claim!;
    await service.requests.finish(identity, holdId, succeededOutcome(CHARGE));
    const charged = { balance: BALANCE - CHARGE, held: HOLD, available: BALANCE - CHARGE - HOLD };
    expect(await service.gateway.balance(service.accountId)).toEqual(charged);

    const db = service.gateway.services.store.db;
    const effects = { clock: systemClock, ids: service.gateway.services.ids };
    const again = await db
      .transaction()
      .execute((trx) => captureHold(trx, effects, { holdId, amount: CHARGE, reason: 'again' }));

    expect(again).toBe('already_resolved');
    expect(await service.gateway.balance(service.accountId)).toEqual(charged);
    expect(await journalOf(service.gateway, holdId)).toEqual(['capture', 'hold']);
    const hold = await db
      .selectFrom('holds')
      .select(['state', 'captured_amount'])
      .where('id', '=', holdId)
      .executeTakeFirstOrThrow();
    expect(hold).toEqual({ state: 'captured', captured_amount: CHARGE });
  });

  it('a release of a captured hold, in another transaction, refuses and moves no money', async () => {
    const service = await setUp(dialect, (created) => (gateway = created));
    // The second keeps HOLD held throughout.
    const [claim] = await claimedOneByOne(service, 2, HOLD);
    const { identity, holdId } = claim!;
    await service.requests.finish(identity, holdId, succeededOutcome(CHARGE));
    const db = service.gateway.services.store.db;
    const effects = { clock: systemClock, ids: service.gateway.services.ids };

    const released = await db
      .transaction()
      .execute((trx) => releaseHold(trx, effects, { holdId, reason: 'again' }));

    expect(released).toBe(false);
    expect(await service.gateway.balance(service.accountId)).toEqual({
      balance: BALANCE - CHARGE,
      held: HOLD,
      available: BALANCE - CHARGE - HOLD,
    });
    expect(await journalOf(service.gateway, holdId)).toEqual(['capture', 'hold']);
  });
});

describeOnPostgres('a batched capture of a hold already resolved, on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  /**
   * `count` requests whose holds are open and records `processing` (and one more that keeps HOLD
   * held throughout, never captured here); the first one's hold is then captured by the
   * transaction way alone, its record left `processing`: only the hold's own guard can refuse a
   * batched capture of it now.
   */
  async function resolvedBehindTheRecord(count: number) {
    const service = await setUp(dialect, (created) => (gateway = created));
    const claims = await claimedOneByOne(service, count + 1, HOLD);
    const db = service.gateway.services.store.db;
    const effects = { clock: systemClock, ids: service.gateway.services.ids };
    const first = claims[0]!;
    const captured = await db
      .transaction()
      .execute((trx) =>
        captureHold(trx, effects, { holdId: first.holdId, amount: CHARGE, reason: 'first' }),
      );
    expect(captured).toBe('captured');
    const batched = new BatchedCapture(db, effects);
    const capture = ({ identity, holdId }: ClaimedRequest) =>
      batched.capture({
        accountId: service.accountId,
        holdId,
        amount: CHARGE,
        reason: `usage of ${identity.requestId}`,
        budgeted: false,
        record: succeededColumns(identity.requestId),
      });
    /** The first record as its capture would have written it (the ledger check compares them). */
    const settleFirstRecord = () => {
      const { id, status: _status, ...columns } = succeededColumns(first.identity.requestId);
      return service.requests.records.transition(db, id, 'processing', 'succeeded', columns);
    };
    return { service, claims, first, capture, settleFirstRecord };
  }

  const expectChargedOnce = async (
    service: { gateway: TestGateway; accountId: string },
    held: number,
  ) =>
    expect(await service.gateway.balance(service.accountId)).toEqual({
      balance: BALANCE - CHARGE,
      held,
      available: BALANCE - CHARGE - held,
    });

  it('alone (one statement): a capture of a hold already captured is refused and moves no money', async () => {
    const { service, first, capture, settleFirstRecord } = await resolvedBehindTheRecord(1);

    expect(await capture(first)).toBe('alone');

    await expectChargedOnce(service, HOLD);
    expect(await journalOf(service.gateway, first.holdId)).toEqual(['capture', 'hold']);
    expect((await service.requests.records.byId(first.identity.requestId))?.status).toBe(
      'processing',
    );
    expect(await settleFirstRecord()).toBe(true);
  });

  it('in a batch (one statement, then one transaction): the resolved hold is taken out, no money moves for it', async () => {
    const { service, claims, first, capture, settleFirstRecord } = await resolvedBehindTheRecord(2);
    const second = claims[1]!;

    // One event-loop turn: one batch of both; the statement refuses, the transaction way takes
    // the resolved one out, and what is left alone is written by its caller.
    const results = await Promise.all([capture(first), capture(second)]);

    expect(results).toEqual(['alone', 'alone']);
    await expectChargedOnce(service, 2 * HOLD);
    expect(await journalOf(service.gateway, first.holdId)).toEqual(['capture', 'hold']);
    expect(await journalOf(service.gateway, second.holdId)).toEqual(['hold']);
    expect(await settleFirstRecord()).toBe(true);
    // The second was untouched: captured now, the same way, it is charged once.
    expect(await capture(second)).toBe('captured');
    expect(await service.gateway.balance(service.accountId)).toEqual({
      balance: BALANCE - 2 * CHARGE,
      held: HOLD,
      available: BALANCE - 2 * CHARGE - HOLD,
    });
  });
});

/** A succeeded record charged `CHARGE`, every outcome column given. */
function succeededColumns(id: string): RecordedOutcomeColumns {
  return {
    id,
    upstream_request_id: null,
    updated_at: Date.now(),
    transcript: null,
    status: 'succeeded',
    http_status: 200,
    response_body: JSON.stringify({ charged: CHARGE }),
    error_code: null,
    usage: JSON.stringify({ tokens: CHARGE }),
    amount: CHARGE,
    pricing_rule: 'test',
    usage_flag: null,
    channel: null,
    channel_attempts: null,
    channel_cost: null,
    line_items: null,
  };
}
