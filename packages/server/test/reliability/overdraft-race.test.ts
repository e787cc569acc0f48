import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import {
  oneMicroYuanEmbeddingsConfig,
  startGateway,
  type TestGateway,
} from '../helpers/gateway.js';

/**
 * The complaint we exist to fix: concurrent requests that overdraw a balance. With a price of
 * 1 micro-yuan per million tokens every small request holds and costs exactly 1, so a balance
 * of 10 covers exactly 10 requests however they interleave.
 */
const config = oneMicroYuanEmbeddingsConfig();

describeEachDialect('overdraft race on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it('lets exactly 10 of 200 concurrent requests through a balance that covers 10', async () => {
    gateway = await startGateway(dialect, { config });
    const { accountId, key } = await gateway.account(10);
    const client = gateway;
    // The delay keeps every request in flight while the others try to hold.
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        client.call('POST', '/v1/embeddings', {
          key,
          body: { model: 'sim-embed', input: `request ${index} [sim:delay=50]` },
        }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 402)).toHaveLength(190);
    for (const response of responses.filter((candidate) => candidate.statusCode === 402)) {
      expect(response.json()).toMatchObject({ error: { code: 'INSUFFICIENT_FUNDS' } });
    }
    expect(await gateway.balance(accountId)).toEqual({ balance: 0, held: 0, available: 0 });
  });
});
