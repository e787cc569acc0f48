import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterEach, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { startSweeper, staleAfterMs } from '../../src/maintenance/sweeper.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { manualClock, startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

describeEachDialect('stale records are swept at start on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it('a gateway that restarts more often than the sweep interval still sweeps: the first sweep runs at start', async () => {
    const clock = manualClock();
    gateway = await startGateway(dialect, { clock });
    const { accountId, key, keyId } = await gateway.account(1_000_000);
    // A request left `processing` by an instance that died after its claim and hold.
    const requestId = `req_${randomUUID()}`;
    const claim = await gateway.services.requests.claim(
      {
        requestId,
        principal: { keyId, accountId, kind: 'personal', models: null, budgeted: false },
        idempotencyKey: randomUUID(),
        fingerprint: 'f',
        method: 'POST',
        path: '/v1/embeddings',
        model: 'sim-embed',
      },
      { amount: 100, priceVersion: 'v1' },
    );
    expect(claim.kind).toBe('claimed');
    const config = parseConfig(testConfig(), 'test');
    clock.advance(staleAfterMs(config) + 1);

    // An interval far longer than the test: only the sweep at start can do it.
    const sweeper = startSweeper(gateway.services, {
      config,
      logger: pino({ level: 'silent' }),
      intervalMs: 3_600_000,
    });
    await sweeper.first;
    sweeper.stop();
    const record = await gateway.call('GET', `/v1/requests/${requestId}`, { key });
    expect(record.json()).toMatchObject({
      status: 'submission_unknown',
      reserve: { amount: 100, state: 'open' },
    });
    await gateway.admin('POST', `/admin/v1/requests/${requestId}/resolve`, {
      action: 'release',
      reason: 'test cleanup',
    });
  });
});
