import { afterEach, expect, it } from 'vitest';
import { ResponseTurns } from '../../src/chat/response-turns.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { manualClock, startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/**
 * The purge of expired records takes their stored Responses turns with them. The risk: a turn is
 * kept just before its request is claimed (chat/response-turns.ts), so a purge that runs in
 * between, or while the claim is still in the event log (accounting.event_log), must not take it
 * for an orphan: `GET /v1/responses/{id}` and `previous_response_id` would then lose it.
 */
const DAY = 86_400_000;

describeEachDialect('stored Responses turns and the purge on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  it('keeps a turn whose claim has not landed yet, and purges orphans and expired records turns', async () => {
    const clock = manualClock();
    gateway = await startGateway(dialect, { clock, config: testConfig() });
    const { key, keyId } = await gateway.account(10_000_000);
    const turns = new ResponseTurns(gateway.services.store.db, clock);
    const turn = { items: [{ role: 'user', content: 'hi' }], echo: {} };
    const expiring = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'x', dimensions: 8 },
    });
    const expiringId = String(expiring.headers['x-service-request-id']);
    await turns.keep(expiringId, keyId, turn);
    await turns.keep('req_never_claimed', keyId, turn);
    clock.advance(31 * DAY);
    // Kept now, its claim still to come.
    await turns.keep('req_about_to_be_claimed', keyId, turn);
    const purged = await gateway.services.requests.records.purgeExpired(clock.now());
    expect(purged).toBe(1);
    const left = await gateway.services.store.db
      .selectFrom('response_turns')
      .select('id')
      .orderBy('id')
      .execute();
    expect(left.map((row) => row.id)).toEqual(['req_about_to_be_claimed']);
  });
});
