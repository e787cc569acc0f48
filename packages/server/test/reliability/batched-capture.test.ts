import { afterEach, expect, it } from 'vitest';
import { outcomeColumns } from '../../src/requests/outcome-columns.js';
import type { RecordedOutcome, RequestService } from '../../src/requests/request-service.js';
import {
  claimedOneByOne,
  countAccountUpdates,
  moneyService,
  succeededOutcome,
} from '../helpers/batched-money.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';

/**
 * Batched captures (requests/batched-capture.ts): on PostgreSQL the captures of one account
 * finishing in one event-loop turn share one transaction and one update of the account row;
 * whatever is not certain to be charged as it stands is written alone, with the single path's
 * answer. SQLite (never batched) gives the reference answers.
 */
describeEachDialect('batched capture on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  const setUp = (balance: number) =>
    moneyService(dialect, balance).then((service) => {
      gateway = service.gateway;
      return service;
    });

  const succeeded = succeededOutcome;

  it('charges the captures of one account finishing together with one update of its row (PostgreSQL)', async () => {
    const service = await setUp(1_000);
    const claims = await claimedOneByOne(service, 40, 5);
    const accountUpdates = await countAccountUpdates(
      service.gateway.services.store.db,
      dialect.name,
    );
    const answers = await Promise.all(
      claims.map(({ identity, holdId }) => service.requests.finish(identity, holdId, succeeded(3))),
    );
    expect(answers.map((answer) => answer.status)).toEqual(claims.map(() => 200));
    expect(await service.gateway.balance(service.accountId)).toEqual({
      balance: 880,
      held: 0,
      available: 880,
    });
    for (const { identity } of claims.slice(0, 3)) {
      const record = await service.requests.records.byId(identity.requestId);
      expect(record).toMatchObject({ status: 'succeeded', amount: 3, http_status: 200 });
    }
    expect(await accountUpdates()).toBe(dialect.name === 'postgres' ? 1 : 40);
  });

  it('writes every outcome column a capture alone writes, so a batched record misses none', async () => {
    const service = await setUp(100);
    const claims = await claimedOneByOne(service, 3, 5);
    const db = service.gateway.services.store.db;
    const accountUpdates = await countAccountUpdates(db, dialect.name);
    // Every optional part of an outcome given, so that each column has something to write.
    const full = (requestId: string): RecordedOutcome => ({
      kind: 'succeeded',
      body: { charged: 4 },
      usage: { tokens: 4 },
      amount: 4,
      pricingRule: 'test',
      upstreamRequestId: `up-${requestId}`,
      status: 201,
      usageFlag: 'usage_above_cap',
      channelCost: 2,
      lineItems: [{ item: 'input', units: 4, price_per_million: 1_000_000, amount: 4 }],
      transcript: ['data: {}'],
      routing: {
        channel: 'second',
        attempts: [
          {
            channel: 'first',
            upstream: 'sim',
            outcome: 'not_processed',
            detail: 'upstream status 503',
          },
          { channel: 'second', upstream: 'sim', outcome: 'succeeded', detail: null },
        ],
      },
    });
    const finish = ({ identity, holdId }: (typeof claims)[number]) =>
      service.requests.finish(identity, holdId, full(identity.requestId));
    // Two together (one batch on PostgreSQL), then the third alone.
    await Promise.all(claims.slice(0, 2).map(finish));
    expect(await accountUpdates()).toBe(dialect.name === 'postgres' ? 1 : 2);
    await finish(claims[2]!);
    const rows = await db
      .selectFrom('requests')
      .select(outcomeColumns)
      .where(
        'id',
        'in',
        claims.map(({ identity }) => identity.requestId),
      )
      .execute();
    const written = (row: (typeof rows)[number]) => {
      const { id, updated_at: _updated, upstream_request_id: upstream, ...columns } = row;
      expect(upstream).toBe(`up-${id}`);
      return columns;
    };
    const alone = written(rows.find((row) => row.id === claims[2]!.identity.requestId)!);
    // Only `error_code` is empty on a success: every other column was written.
    expect(Object.entries(alone).filter(([, value]) => value === null)).toEqual([
      ['error_code', null],
    ]);
    for (const row of rows) expect(written(row)).toEqual(alone);
  });

  it('charges the captures of many accounts finishing together with one statement for their rows (PostgreSQL)', async () => {
    const service = await setUp(0);
    const accounts = await Promise.all(
      Array.from({ length: 8 }, () => service.gateway.account(100)),
    );
    const claims = [];
    for (const of of accounts) claims.push(...(await claimedOneByOne(service, 3, 5, { of })));
    const accountUpdates = await countAccountUpdates(
      service.gateway.services.store.db,
      dialect.name,
    );
    const answers = await Promise.all(
      claims.map(({ identity, holdId }) => service.requests.finish(identity, holdId, succeeded(4))),
    );
    expect(answers.map((answer) => answer.status)).toEqual(claims.map(() => 200));
    for (const { accountId } of accounts)
      expect(await service.gateway.balance(accountId)).toEqual({
        balance: 88,
        held: 0,
        available: 88,
      });
    // PostgreSQL: one for all 8 rows (one per account when batches were per account).
    expect(await accountUpdates()).toBe(dialect.name === 'postgres' ? 1 : 24);
  });

  it('two instances batching claims and captures of the same accounts in opposite orders never roll a batch back (no deadlock)', async () => {
    const rolledBack: unknown[] = [];
    const service = await moneyService(dialect, 0, {
      warn: (_fields: unknown, message: unknown) => rolledBack.push(message),
    });
    gateway = service.gateway;
    const accounts = await Promise.all(
      Array.from({ length: 6 }, () => service.gateway.account(1_000)),
    );
    const instances = [service.requests, service.another()];
    // Each instance sends its requests in its own order of the accounts (the second reversed),
    // so batches meet on the same rows, claims and captures at once, round after round.
    const run = async (requests: RequestService, order: typeof accounts) => {
      for (let round = 0; round < 5; round += 1)
        await Promise.all(
          order.map(async (of) => {
            const identity = service.identity(false, of);
            const claim = await requests.claim(identity, { amount: 3, priceVersion: 'v1' });
            if (claim.kind !== 'claimed') throw new Error(`not claimed: ${claim.kind}`);
            return (await requests.finish(identity, claim.holdId, succeeded(2))).status;
          }),
        );
    };
    await Promise.all([run(instances[0]!, accounts), run(instances[1]!, [...accounts].reverse())]);
    expect(rolledBack).toEqual([]);
    for (const { accountId } of accounts)
      expect(await service.gateway.balance(accountId)).toEqual({
        balance: 980,
        held: 0,
        available: 980,
      });
  });

  it('charges a capture above its hold by the single rules, beside a batch: awaiting funds when the extra is short', async () => {
    const service = await setUp(12);
    // Three holds of 3 (9 held, 3 available); one capture asks 9 (6 more than its hold), more
    // than is ever available in any order (at most 4, after the capture of 2): short.
    const claims = await claimedOneByOne(service, 3, 3);
    const amounts = [2, 9, 3];
    const answers = await Promise.all(
      claims.map(({ identity, holdId }, index) =>
        service.requests.finish(identity, holdId, succeeded(amounts[index]!)),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 402, 200]);
    const short = await service.requests.records.byId(claims[1]!.identity.requestId);
    expect(short).toMatchObject({ status: 'awaiting_funds', amount: 9 });
    // Charged 2 + 3; the short one's hold of 3 stays open, awaiting funds.
    expect(await service.gateway.balance(service.accountId)).toEqual({
      balance: 7,
      held: 3,
      available: 4,
    });
  });

  it('records a swept request of the batch from submission_unknown, and the others as usual', async () => {
    const service = await setUp(100);
    const claims = await claimedOneByOne(service, 4, 5);
    // The sweeper took the second one for a request of a dead instance.
    await service.gateway.services.store.db
      .updateTable('requests')
      .set({ status: 'submission_unknown' })
      .where('id', '=', claims[1]!.identity.requestId)
      .execute();
    const answers = await Promise.all(
      claims.map(({ identity, holdId }) => service.requests.finish(identity, holdId, succeeded(4))),
    );
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
    for (const { identity } of claims)
      expect(await service.requests.records.byId(identity.requestId)).toMatchObject({
        status: 'succeeded',
        amount: 4,
      });
    expect(await service.gateway.balance(service.accountId)).toEqual({
      balance: 84,
      held: 0,
      available: 84,
    });
  });

  it('never captures a hold twice when the same outcome is finished twice at once', async () => {
    const service = await setUp(100);
    const [only] = await claimedOneByOne(service, 1, 5);
    const answers = await Promise.all([
      service.requests.finish(only!.identity, only!.holdId, succeeded(4)),
      service.requests.finish(only!.identity, only!.holdId, succeeded(4)),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(await service.gateway.balance(service.accountId)).toEqual({
      balance: 96,
      held: 0,
      available: 96,
    });
  });
});
