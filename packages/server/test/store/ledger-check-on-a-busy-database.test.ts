import { afterEach, expect, it } from 'vitest';
import type { LedgerReport } from '@tollgate/protocol';
import { checkLedger } from '../../src/billing/ledger-check.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { embeddingsOnlyConfig, startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * The ledger check read its tables one after another outside any transaction: money moved
 * between two reads (a top-up, a hold, a capture) looked like a broken invariant, and on a busy
 * cluster operators got false alarms (the CLI even checked twice to hide it). It now reads one
 * snapshot, so a check taken at any moment of a busy workload is clean.
 */
describeEachDialect('ledger check on a busy $name database', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it('reports no violation while top-ups and paid requests move money between its reads', async () => {
    gateway = await startGateway(dialect, { config: embeddingsOnlyConfig(1_000_000) });
    const client = gateway;
    const { accountId, key } = await client.account(1_000_000_000);
    let busy = true;
    const workload = async (worker: number) => {
      for (let index = 0; busy; index += 1) {
        if (index % 2 === 0)
          await client.admin('POST', `/admin/v1/accounts/${accountId}/topups`, {
            amount: 1_000,
            reference: `busy-${worker}-${index}`,
          });
        else
          await client.call('POST', '/v1/embeddings', {
            key,
            body: { model: 'sim-embed', input: `busy ${worker} ${index}` },
          });
      }
    };
    const workers = Array.from({ length: 8 }, (_, worker) => workload(worker));
    const reports: LedgerReport[] = [];
    const until = Date.now() + 3_000;
    while (Date.now() < until) reports.push(await checkLedger(client.services.store.db));
    busy = false;
    await Promise.all(workers);
    expect(reports.length).toBeGreaterThan(3);
    expect(reports.flatMap((report) => report.violations)).toEqual([]);
  });
});
