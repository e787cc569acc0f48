import { afterEach, expect, it } from 'vitest';
import { checkLedger } from '../../src/billing/ledger-check.js';
import { describeOnPostgres } from '../helpers/dialects.js';
import {
  oneMicroYuanEmbeddingsConfig,
  startGateway,
  type TestGateway,
} from '../helpers/gateway.js';
import { sharedDatabase } from '../helpers/shared-database.js';

/**
 * Batched admission and capture (requests/batched-admission.ts, batched-capture.ts) across
 * three instances on one PostgreSQL schema: each instance batches its own claims and captures
 * of an account, and the batches of different instances meet only on the account's row, so
 * the money must come out exactly as if every request had been admitted one at a time.
 * Every request holds and costs exactly 1 micro-yuan.
 */
describeOnPostgres('batched money across three instances on $name', (dialect) => {
  let instances: TestGateway[] = [];
  let removeDatabase: (() => Promise<void>) | undefined;
  afterEach(async () => {
    const [first] = instances;
    if (first !== undefined)
      expect((await checkLedger(first.services.store.db)).violations).toEqual([]);
    for (const instance of instances) await instance.close();
    await removeDatabase?.();
    instances = [];
  });

  async function startThree(): Promise<TestGateway[]> {
    const shared = sharedDatabase(dialect);
    removeDatabase = shared.remove;
    const start = () =>
      startGateway(dialect, { config: oneMicroYuanEmbeddingsConfig(), services: shared.services });
    // The first creates the schema (CREATE SCHEMA IF NOT EXISTS races with itself); the other two
    // start together.
    instances = [await start()];
    instances.push(...(await Promise.all([start(), start()])));
    return instances;
  }

  /** `count` concurrent embeddings calls, spread round-robin over the instances. */
  function spread(gateways: TestGateway[], count: number, key: (index: number) => string) {
    return Promise.all(
      Array.from({ length: count }, (_, index) =>
        gateways[index % gateways.length]!.call('POST', '/v1/embeddings', {
          key: key(index),
          body: { model: 'sim-embed', input: `request ${index} [sim:delay=50]` },
        }),
      ),
    );
  }

  it('lets exactly 10 of 200 concurrent requests over three instances through a balance that covers 10', async () => {
    const gateways = await startThree();
    const { accountId, key } = await gateways[0]!.account(10);
    const responses = await spread(gateways, 200, () => key);
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 402)).toHaveLength(190);
    for (const response of responses.filter((candidate) => candidate.statusCode === 402))
      expect(response.json()).toMatchObject({ error: { code: 'INSUFFICIENT_FUNDS' } });
    expect(await gateways[1]!.balance(accountId)).toEqual({ balance: 0, held: 0, available: 0 });
  });

  it('admits exactly 10 of 200 concurrent requests over three instances against a key budget worth 10', async () => {
    const gateways = await startThree();
    const { accountId, key, keyId } = await gateways[0]!.account(1_000);
    await gateways[0]!.admin('PUT', `/admin/v1/keys/${keyId}/budget`, {
      limit: 10,
      window: 'daily',
    });
    const responses = await spread(gateways, 200, () => key);
    const refused = responses.filter((response) => response.statusCode === 402);
    expect(responses.filter((response) => response.statusCode === 200)).toHaveLength(10);
    expect(refused).toHaveLength(190);
    for (const response of refused)
      expect(response.json()).toMatchObject({
        error: { code: 'INSUFFICIENT_FUNDS', message: expect.stringContaining('budget') },
      });
    expect(await gateways[2]!.balance(accountId)).toEqual({
      balance: 990,
      held: 0,
      available: 990,
    });
  });

  it('admits exactly 10 of 200 concurrent requests over three instances against an account budget worth 10', async () => {
    const gateways = await startThree();
    const { accountId, key } = await gateways[0]!.account(1_000);
    await gateways[0]!.admin('PUT', `/admin/v1/accounts/${accountId}/budget`, {
      limit: 10,
      window: 'monthly',
    });
    const responses = await spread(gateways, 200, () => key);
    expect(responses.filter((response) => response.statusCode === 200)).toHaveLength(10);
    expect(responses.filter((response) => response.statusCode === 402)).toHaveLength(190);
    expect(await gateways[2]!.balance(accountId)).toEqual({
      balance: 990,
      held: 0,
      available: 990,
    });
  });

  it('finishes two accounts whose claims and captures interleave on three instances without a deadlock', async () => {
    const gateways = await startThree();
    const first = await gateways[0]!.account(1_000);
    const second = await gateways[1]!.account(1_000);
    // Each instance admits and captures both accounts at once, every turn: any lock taken in a
    // different order by two of them would deadlock (PostgreSQL would then fail a transaction).
    const rounds = await Promise.all(
      [0, 1, 2].map(() =>
        spread(gateways, 120, (index) => (index % 2 === 0 ? first.key : second.key)),
      ),
    );
    const statuses = rounds.flat().map((response) => response.statusCode);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(await gateways[0]!.balance(first.accountId)).toEqual({
      balance: 820,
      held: 0,
      available: 820,
    });
    expect(await gateways[0]!.balance(second.accountId)).toEqual({
      balance: 820,
      held: 0,
      available: 820,
    });
  });
});
