import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { checkLedger } from '../../src/billing/ledger-check.js';
import { createIdGenerator, type IdGenerator } from '../../src/util/effects.js';
import { ONE_AT_A_TIME, countAccountUpdates, moneyService } from '../helpers/batched-money.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';

/**
 * Batched admission (requests/batched-admission.ts): on PostgreSQL the plain claims of one
 * account that arrive within one event-loop turn share one transaction and one guarded update
 * of the account row. These tests drive `RequestService.claim` directly, with batching on, on
 * both dialects: SQLite never batches, so its answers are the one-at-a-time reference that the
 * PostgreSQL batch must reproduce exactly.
 */
describeEachDialect('batched admission on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  const setUp = (balance: number, options: { ids?: IdGenerator } = {}) =>
    moneyService(dialect, balance, options).then((service) => {
      gateway = service.gateway;
      return service;
    });

  it('admits in arrival order exactly what one at a time admits, skipping a claim that does not fit', async () => {
    const { accountId, requests, identity } = await setUp(ONE_AT_A_TIME.balance);
    const claims = await Promise.all(
      ONE_AT_A_TIME.amounts.map((amount) =>
        requests.claim(identity(), { amount, priceVersion: 'v1' }),
      ),
    );
    expect(claims.map((claim) => claim.kind)).toEqual(ONE_AT_A_TIME.kinds);
    const refusal = claims[1];
    expect(refusal?.kind === 'refused' && refusal.error.code).toBe('INSUFFICIENT_FUNDS');
    expect(await gateway!.balance(accountId)).toEqual({ balance: 10, held: 10, available: 0 });
    // The refused claims left no record, so their idempotency keys stay free.
    const records = await gateway!.services.store.db
      .selectFrom('requests')
      .select('reserve_amount')
      .where('account_id', '=', accountId)
      .orderBy('reserve_amount')
      .execute();
    expect(records.map((row) => row.reserve_amount)).toEqual([1, 3, 6]);
  });

  it('locks and updates the account row once for claims that arrive together (PostgreSQL)', async () => {
    const { accountId, requests, identity } = await setUp(1_000);
    const accountUpdates = await countAccountUpdates(gateway!.services.store.db, dialect.name);
    const claims = await Promise.all(
      Array.from({ length: 50 }, () =>
        requests.claim(identity(), { amount: 1, priceVersion: 'v1' }),
      ),
    );
    expect(claims.every((claim) => claim.kind === 'claimed')).toBe(true);
    expect(await gateway!.balance(accountId)).toEqual({ balance: 1_000, held: 50, available: 950 });
    // SQLite takes one guarded update per claim inside its group commit; PostgreSQL one in all.
    expect(await accountUpdates()).toBe(dialect.name === 'postgres' ? 1 : 50);
  });

  it('admits the claims of several accounts arriving together as one at a time would, each account on its own', async () => {
    const { accountId, keyId, requests, identity } = await setUp(10);
    const other = await gateway!.account(5);
    const first = { accountId, keyId };
    // One at a time: the first account admits 6 and 3 (not the second 6); the other 3 and 1
    // (not the second 3): a refusal of one account never touches the other's claims.
    const asked: [typeof first, number][] = [
      [first, 6],
      [other, 3],
      [first, 6],
      [other, 3],
      [first, 3],
      [other, 1],
    ];
    const claims = await Promise.all(
      asked.map(([of, amount]) =>
        requests.claim(identity(false, of), { amount, priceVersion: 'v1' }),
      ),
    );
    expect(claims.map((claim) => claim.kind)).toEqual([
      'claimed',
      'claimed',
      'refused',
      'refused',
      'claimed',
      'claimed',
    ]);
    expect(await gateway!.balance(accountId)).toEqual({ balance: 10, held: 9, available: 1 });
    expect(await gateway!.balance(other.accountId)).toEqual({ balance: 5, held: 4, available: 1 });
  });

  it('updates the rows of many accounts whose claims arrive together in one statement (PostgreSQL)', async () => {
    const { requests, identity } = await setUp(0);
    const accounts = await Promise.all(Array.from({ length: 8 }, () => gateway!.account(100)));
    const accountUpdates = await countAccountUpdates(gateway!.services.store.db, dialect.name);
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
    // One transaction for all 24 claims: PostgreSQL locks the 8 rows and updates them with one
    // statement (it took one per account, 8, when batches were per account); SQLite one per claim.
    expect(await accountUpdates()).toBe(dialect.name === 'postgres' ? 1 : 24);
  });

  it('a claim whose hold cannot be written does not fail the others of its batch', async () => {
    const ids = createIdGenerator();
    let holds = 0;
    // The fifth hold reuses the first hold's id: its insert violates the primary key.
    const colliding = {
      next: (prefix: string) =>
        prefix === 'hold' && ++holds === 5
          ? 'hold_collides'
          : prefix === 'hold' && holds === 1
            ? 'hold_collides'
            : ids.next(prefix),
      uuid: () => ids.uuid(),
    };
    const { accountId, requests, identity } = await setUp(100, { ids: colliding });
    const first = await requests.claim(identity(), { amount: 1, priceVersion: 'v1' });
    expect(first).toEqual({ kind: 'claimed', holdId: 'hold_collides' });
    const settled = await Promise.allSettled(
      Array.from({ length: 8 }, () =>
        requests.claim(identity(), { amount: 1, priceVersion: 'v1' }),
      ),
    );
    const claimed = settled.filter(
      (result) => result.status === 'fulfilled' && result.value.kind === 'claimed',
    );
    const failed = settled.filter((result) => result.status === 'rejected');
    expect(claimed).toHaveLength(7);
    expect(failed).toHaveLength(1);
    expect(await gateway!.balance(accountId)).toEqual({ balance: 100, held: 8, available: 92 });
  });

  it('answers a second use of one idempotency key in the same turn as in progress, and admits the rest', async () => {
    const { accountId, requests, identity } = await setUp(100);
    const shared = identity();
    const claims = await Promise.all([
      requests.claim(shared, { amount: 1, priceVersion: 'v1' }),
      requests.claim(identity(), { amount: 1, priceVersion: 'v1' }),
      requests.claim(
        { ...shared, requestId: `req_${randomUUID()}` },
        { amount: 1, priceVersion: 'v1' },
      ),
      requests.claim(identity(), { amount: 1, priceVersion: 'v1' }),
    ]);
    expect(claims.map((claim) => claim.kind)).toEqual(['claimed', 'claimed', 'refused', 'claimed']);
    const repeated = claims[2];
    expect(repeated?.kind === 'refused' && repeated.error.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    expect(await gateway!.balance(accountId)).toEqual({ balance: 100, held: 3, available: 97 });
  });

  it('keeps a key budget exact inside one batch: the claims past it are refused as over budget', async () => {
    const { accountId, keyId, requests, identity } = await setUp(1_000);
    await gateway!.admin('PUT', `/admin/v1/keys/${keyId}/budget`, { limit: 10, window: 'daily' });
    const claims = await Promise.all(
      Array.from({ length: 30 }, () =>
        requests.claim(identity(true), { amount: 1, priceVersion: 'v1' }),
      ),
    );
    expect(claims.filter((claim) => claim.kind === 'claimed')).toHaveLength(10);
    const refused = claims.filter((claim) => claim.kind === 'refused');
    expect(refused).toHaveLength(20);
    for (const claim of refused)
      expect(claim.kind === 'refused' && claim.error.message).toContain('budget');
    expect(await gateway!.balance(accountId)).toEqual({ balance: 1_000, held: 10, available: 990 });
    expect((await checkLedger(gateway!.services.store.db)).violations).toEqual([]);
  });
});
