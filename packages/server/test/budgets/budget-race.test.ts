import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import {
  oneMicroYuanEmbeddingsConfig,
  startGateway,
  type TestGateway,
} from '../helpers/gateway.js';

/**
 * The overdraft race, for budgets: every request holds and costs exactly 1 micro-yuan, the
 * balance covers 1,000, and a budget of 10 must admit at most 10 of 200 concurrent requests,
 * however their holds interleave (the guarded update decides, not a read before it).
 */
const config = oneMicroYuanEmbeddingsConfig();

describeEachDialect('budget race on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  async function race(client: TestGateway, key: string) {
    // The delay keeps every admitted request in flight while the others try to hold.
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        client.call('POST', '/v1/embeddings', {
          key,
          body: { model: 'sim-embed', input: `request ${index} [sim:delay=50]` },
        }),
      ),
    );
    const refused = responses.filter((response) => response.statusCode === 402);
    for (const response of refused)
      expect(response.json()).toMatchObject({
        error: { code: 'INSUFFICIENT_FUNDS', message: expect.stringContaining('budget') },
      });
    return {
      admitted: responses.filter((response) => response.statusCode === 200).length,
      refused: refused.length,
    };
  }

  it('admits at most 10 of 200 concurrent requests against a key budget worth 10', async () => {
    gateway = await startGateway(dialect, { config });
    const { accountId, key, keyId } = await gateway.account(1_000);
    await gateway.admin('PUT', `/admin/v1/keys/${keyId}/budget`, { limit: 10, window: 'daily' });
    expect(await race(gateway, key)).toEqual({ admitted: 10, refused: 190 });
    expect(await gateway.balance(accountId)).toEqual({ balance: 990, held: 0, available: 990 });
    const keys = await gateway.admin('GET', `/admin/v1/accounts/${accountId}/keys`);
    expect(keys['data']).toEqual([
      expect.objectContaining({
        id: keyId,
        budget: expect.objectContaining({ limit: 10, spent: 10, held: 0, remaining: 0 }),
      }),
    ]);
  });

  it('admits at most 10 of 200 concurrent requests against an account budget worth 10', async () => {
    gateway = await startGateway(dialect, { config });
    const { accountId, key } = await gateway.account(1_000);
    await gateway.admin('PUT', `/admin/v1/accounts/${accountId}/budget`, {
      limit: 10,
      window: 'monthly',
    });
    expect(await race(gateway, key)).toEqual({ admitted: 10, refused: 190 });
    expect(await gateway.balance(accountId)).toEqual({ balance: 990, held: 0, available: 990 });
  });
});
