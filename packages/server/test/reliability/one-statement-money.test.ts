import { sql, type Kysely, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { RequestService } from '../../src/requests/request-service.js';
import type { Database } from '../../src/store/schema.js';
import { createIdGenerator, systemClock } from '../../src/util/effects.js';
import {
  ONE_AT_A_TIME,
  claimedOneByOne,
  moneyService,
  succeededOutcome,
  type ClaimedRequest,
} from '../helpers/batched-money.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';

/**
 * Batched money in one statement (requests/one-statement.ts): on PostgreSQL a batch of one
 * account's claims, or of its captures, is written by ONE statement, with no transaction of its
 * own, or not at all. The risks: the path silently never taken (every batch falling back to the
 * transaction, which gives the same answers, only slower), a refused statement that leaves part
 * of its writes, and a broken statement hidden by the fallback. SQLite (never batched) gives the
 * reference answers.
 */
describeEachDialect('batched money in one statement on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  /** The raw statements run through Kysely (the one-statement writes are such), by their text. */
  function counted(db: Kysely<Database>): {
    db: Kysely<Database>;
    count: (start: string) => number;
  } {
    const texts: string[] = [];
    const plugin: KyselyPlugin = {
      transformQuery: ({ node }) => {
        texts.push(firstWords(node));
        return node;
      },
      transformResult: ({ result }) => Promise.resolve(result),
    };
    return {
      db: db.withPlugin(plugin),
      count: (start) => texts.filter((text) => text.startsWith(start)).length,
    };
  }

  async function setUp(balance: number) {
    const service = await moneyService(dialect, balance);
    gateway = service.gateway;
    const statements = counted(service.gateway.services.store.db);
    const warnings: unknown[] = [];
    const requests = new RequestService(
      statements.db,
      { clock: systemClock, ids: createIdGenerator() },
      86_400_000,
      { warn: (...args: unknown[]) => warnings.push(args[0]), info: () => {} },
      dialect.name === 'postgres',
    );
    return { ...service, requests, statements, warnings };
  }

  const succeeded = succeededOutcome;

  /** How many records and holds the accounts have (a refused statement must leave none). */
  async function recordsAndHolds(accountIds: readonly string[]) {
    const db = gateway!.services.store.db;
    const count = async (table: 'requests' | 'holds') =>
      (await db.selectFrom(table).select('id').where('account_id', 'in', accountIds).execute())
        .length;
    return { records: await count('requests'), holds: await count('holds') };
  }

  it('admits 30 claims of one account arriving together with one statement', async () => {
    const { accountId, requests, identity, statements, warnings } = await setUp(1_000);
    const claims = await Promise.all(
      Array.from({ length: 30 }, () =>
        requests.claim(identity(), { amount: 2, priceVersion: 'v1' }),
      ),
    );
    expect(claims.every((claim) => claim.kind === 'claimed')).toBe(true);
    expect(await gateway!.balance(accountId)).toEqual({ balance: 1_000, held: 60, available: 940 });
    expect(statements.count('with new_records')).toBe(dialect.name === 'postgres' ? 1 : 0);
    expect(warnings).toEqual([]);
  });

  it('rolls a batch the account cannot cover back whole, then decides it claim by claim', async () => {
    const { accountId, requests, identity, statements, warnings } = await setUp(
      ONE_AT_A_TIME.balance,
    );
    const claims = await Promise.all(
      ONE_AT_A_TIME.amounts.map((amount) =>
        requests.claim(identity(), { amount, priceVersion: 'v1' }),
      ),
    );
    expect(claims.map((claim) => claim.kind)).toEqual(ONE_AT_A_TIME.kinds);
    expect(await gateway!.balance(accountId)).toEqual({ balance: 10, held: 10, available: 0 });
    // Nothing of the refused statement stayed: a record and a hold for each admitted claim only.
    expect(await recordsAndHolds([accountId])).toEqual({ records: 3, holds: 3 });
    expect(statements.count('with new_records')).toBe(dialect.name === 'postgres' ? 1 : 0);
    // A refusal is routine: nothing to report.
    expect(warnings).toEqual([]);
  });

  it('captures 30 of one account finishing together with one statement', async () => {
    const service = await setUp(1_000);
    const claims = await claimedOneByOne(service, 30, 5);
    const answers = await Promise.all(
      claims.map(({ identity, holdId }) => service.requests.finish(identity, holdId, succeeded(3))),
    );
    expect(answers.map((answer) => answer.status)).toEqual(claims.map(() => 200));
    expect(await service.gateway.balance(service.accountId)).toEqual({
      balance: 910,
      held: 0,
      available: 910,
    });
    const record = await service.requests.records.byId(claims[0]!.identity.requestId);
    expect(record).toMatchObject({ status: 'succeeded', amount: 3, http_status: 200 });
    expect(service.statements.count('with captured')).toBe(dialect.name === 'postgres' ? 1 : 0);
    expect(service.warnings).toEqual([]);
  });

  it('admits the claims of several accounts arriving together with one statement', async () => {
    const { requests, identity, statements, warnings } = await setUp(0);
    const accounts = await Promise.all(Array.from({ length: 6 }, () => gateway!.account(100)));
    const claims = await Promise.all(
      accounts.flatMap((of) =>
        [1, 2, 3].map((amount) =>
          requests.claim(identity(false, of), { amount, priceVersion: 'v1' }),
        ),
      ),
    );
    expect(claims.every((claim) => claim.kind === 'claimed')).toBe(true);
    for (const { accountId } of accounts)
      expect(await gateway!.balance(accountId)).toEqual({ balance: 100, held: 6, available: 94 });
    expect(statements.count('with new_records')).toBe(dialect.name === 'postgres' ? 1 : 0);
    expect(warnings).toEqual([]);
  });

  it('rolls a batch of several accounts back whole when one of them cannot cover its sum, then decides claim by claim', async () => {
    const { requests, identity, statements, warnings } = await setUp(0);
    const rich = await gateway!.account(100);
    const poor = await gateway!.account(5);
    const claims = await Promise.all([
      requests.claim(identity(false, rich), { amount: 10, priceVersion: 'v1' }),
      requests.claim(identity(false, poor), { amount: 3, priceVersion: 'v1' }),
      requests.claim(identity(false, poor), { amount: 3, priceVersion: 'v1' }),
      requests.claim(identity(false, rich), { amount: 20, priceVersion: 'v1' }),
    ]);
    // One at a time: both of the rich account's, the poor account's first (3 of 5), not its second.
    expect(claims.map((claim) => claim.kind)).toEqual(['claimed', 'claimed', 'refused', 'claimed']);
    expect(await gateway!.balance(rich.accountId)).toEqual({
      balance: 100,
      held: 30,
      available: 70,
    });
    expect(await gateway!.balance(poor.accountId)).toEqual({ balance: 5, held: 3, available: 2 });
    // Nothing of the refused statement stayed: a record and a hold for each admitted claim only.
    expect(await recordsAndHolds([rich.accountId, poor.accountId])).toEqual({
      records: 3,
      holds: 3,
    });
    expect(statements.count('with new_records')).toBe(dialect.name === 'postgres' ? 1 : 0);
    expect(warnings).toEqual([]);
  });

  it('captures the holds of several accounts finishing together with one statement', async () => {
    const service = await setUp(0);
    const accounts = await Promise.all(
      Array.from({ length: 6 }, () => service.gateway.account(100)),
    );
    const claims: ClaimedRequest[] = [];
    for (const of of accounts) claims.push(...(await claimedOneByOne(service, 3, 5, { of })));
    const answers = await Promise.all(
      claims.map(({ identity, holdId }, index) =>
        service.requests.finish(identity, holdId, succeeded(1 + (index % 3))),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(claims.map(() => 200));
    for (const { accountId } of accounts)
      expect(await service.gateway.balance(accountId)).toEqual({
        balance: 94,
        held: 0,
        available: 94,
      });
    const record = await service.requests.records.byId(claims[4]!.identity.requestId);
    expect(record).toMatchObject({ status: 'succeeded', amount: 2, http_status: 200 });
    expect(service.statements.count('with captured')).toBe(dialect.name === 'postgres' ? 1 : 0);
    expect(service.warnings).toEqual([]);
  });

  /** A key's budget as the ledger keeps it. */
  async function keyBudget(keyId: string) {
    return gateway!.services.store.db
      .selectFrom('api_keys')
      .select(['budget_held', 'budget_spent'])
      .where('id', '=', keyId)
      .executeTakeFirstOrThrow();
  }

  const setKeyBudget = (keyId: string, limit: number) =>
    gateway!.admin('PUT', `/admin/v1/keys/${keyId}/budget`, { limit, window: 'daily' });

  it('admits claims with key budgets, of several accounts, in one statement: each key reserves its own sum', async () => {
    const { requests, identity, statements, warnings } = await setUp(0);
    const accounts = await Promise.all(Array.from({ length: 3 }, () => gateway!.account(100)));
    for (const { keyId } of accounts) await setKeyBudget(keyId, 50);
    const claims = await Promise.all(
      accounts.flatMap((of, index) =>
        [1, 2, 3 + index].map((amount) =>
          requests.claim(identity(true, of), { amount, priceVersion: 'v1' }),
        ),
      ),
    );
    expect(claims.every((claim) => claim.kind === 'claimed')).toBe(true);
    for (const [index, { accountId, keyId }] of accounts.entries()) {
      const held = 6 + index;
      expect(await gateway!.balance(accountId)).toEqual({
        balance: 100,
        held,
        available: 100 - held,
      });
      expect(await keyBudget(keyId)).toEqual({ budget_held: held, budget_spent: 0 });
    }
    expect(statements.count('with new_records')).toBe(dialect.name === 'postgres' ? 1 : 0);
    expect(warnings).toEqual([]);
  });

  it('rolls a batch past its key budget back whole, then decides claim by claim', async () => {
    const { accountId, keyId, requests, identity, statements, warnings } = await setUp(1_000);
    await setKeyBudget(keyId, 10);
    const claims = await Promise.all(
      [4, 4, 4].map((amount) => requests.claim(identity(true), { amount, priceVersion: 'v1' })),
    );
    // One at a time: 4 and 4 fit the budget of 10, the third does not.
    expect(claims.map((claim) => claim.kind)).toEqual(['claimed', 'claimed', 'refused']);
    expect(await gateway!.balance(accountId)).toEqual({ balance: 1_000, held: 8, available: 992 });
    expect(await keyBudget(keyId)).toEqual({ budget_held: 8, budget_spent: 0 });
    expect(await recordsAndHolds([accountId])).toEqual({ records: 2, holds: 2 });
    expect(statements.count('with new_records')).toBe(dialect.name === 'postgres' ? 1 : 0);
    expect(warnings).toEqual([]);
  });

  it('captures holds with key budgets, of one account and of several, in one statement each: each key given back its holds and charged its captures', async () => {
    const service = await setUp(1_000);
    const others = await Promise.all(Array.from({ length: 2 }, () => service.gateway.account(100)));
    const owners = [{ accountId: service.accountId, keyId: service.keyId }, ...others];
    for (const { keyId } of owners) await setKeyBudget(keyId, 500);
    const claimsOf = (of: (typeof owners)[number], count: number) =>
      claimedOneByOne(service, count, 5, { of, budgeted: true });
    const finishAll = (claims: readonly ClaimedRequest[]) =>
      Promise.all(
        claims.map(({ identity, holdId }) =>
          service.requests.finish(identity, holdId, succeeded(3)),
        ),
      );
    // One account's batch, then a batch of all three.
    const alone = await claimsOf(owners[0]!, 10);
    expect((await finishAll(alone)).every((answer) => answer.status === 200)).toBe(true);
    expect(await keyBudget(service.keyId)).toEqual({ budget_held: 0, budget_spent: 30 });
    const together = (await Promise.all(owners.map((of) => claimsOf(of, 3)))).flat();
    expect((await finishAll(together)).every((answer) => answer.status === 200)).toBe(true);
    expect(await keyBudget(service.keyId)).toEqual({ budget_held: 0, budget_spent: 39 });
    for (const { accountId, keyId } of others) {
      expect(await keyBudget(keyId)).toEqual({ budget_held: 0, budget_spent: 9 });
      expect(await service.gateway.balance(accountId)).toEqual({
        balance: 91,
        held: 0,
        available: 91,
      });
    }
    expect(await service.gateway.balance(service.accountId)).toEqual({
      balance: 961,
      held: 0,
      available: 961,
    });
    expect(service.statements.count('with captured')).toBe(dialect.name === 'postgres' ? 2 : 0);
    expect(service.warnings).toEqual([]);
  });

  it('captures holds with key budgets the transaction way when the one statement refuses: every key given back its holds and charged its captures in one update', async () => {
    const service = await setUp(1_000);
    const other = await service.gateway.account(100);
    const owners = [{ accountId: service.accountId, keyId: service.keyId }, other];
    for (const { keyId } of owners) await setKeyBudget(keyId, 500);
    const [first, second] = await Promise.all(
      owners.map((of) => claimedOneByOne(service, 2, 5, { of, budgeted: true })),
    );
    // 7 is above its hold of 5: the one statement refuses the batch, the transaction way takes
    // that capture out (written alone) and captures the other three together.
    const amounts = [3, 7, 3, 4];
    const answers = await Promise.all(
      [...first!, ...second!].map(({ identity, holdId }, index) =>
        service.requests.finish(identity, holdId, succeeded(amounts[index]!)),
      ),
    );
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(await keyBudget(service.keyId)).toEqual({ budget_held: 0, budget_spent: 10 });
    expect(await keyBudget(other.keyId)).toEqual({ budget_held: 0, budget_spent: 7 });
    expect(await service.gateway.balance(service.accountId)).toEqual({
      balance: 990,
      held: 0,
      available: 990,
    });
    expect(await service.gateway.balance(other.accountId)).toEqual({
      balance: 93,
      held: 0,
      available: 93,
    });
    const postgres = dialect.name === 'postgres';
    expect(service.statements.count('with captured')).toBe(postgres ? 1 : 0);
    expect(service.statements.count('update api_keys set budget_held = budget_held - k.held')).toBe(
      postgres ? 1 : 0,
    );
    expect(service.warnings).toEqual([]);
  });

  it('reports a one-statement batch that failed for another reason, and still answers each claim exactly', async () => {
    const { accountId, requests, identity, warnings } = await setUp(10);
    if (dialect.name === 'postgres')
      // The refusal itself now fails (undefined function): not a refusal, so it is reported.
      await sql`drop function tollgate_refuse(text)`.execute(gateway!.services.store.db);
    const claims = await Promise.all(
      [6, 6, 3].map((amount) => requests.claim(identity(), { amount, priceVersion: 'v1' })),
    );
    expect(claims.map((claim) => claim.kind)).toEqual(['claimed', 'refused', 'claimed']);
    expect(await gateway!.balance(accountId)).toEqual({ balance: 10, held: 9, available: 1 });
    expect(warnings.map((warning) => (warning as { err?: { code?: string } }).err?.code)).toEqual(
      dialect.name === 'postgres' ? ['42883'] : [],
    );
  });
});

function firstWords(node: RootOperationNode): string {
  return node.kind === 'RawNode' ? node.sqlFragments.join('?').trim().replace(/\s+/g, ' ') : '';
}
