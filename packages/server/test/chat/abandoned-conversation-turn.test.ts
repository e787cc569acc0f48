import { afterEach, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { staleAfterMs } from '../../src/maintenance/sweeper.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { manualClock, startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const user = (content: string) => [{ role: 'user', content }];

/**
 * The risk: an instance dies mid-turn (kill -9) and its conversation says
 * `CONVERSATION_PENDING` forever, since only the dead process would have ended the turn. The
 * next turn must take it over once the dead turn is over by other evidence, within the stale
 * age, and never while the turn may still be running.
 */
describeEachDialect('a conversation whose turn was abandoned on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  async function withAbandonedTurn(pendingRequestId: (keyId: string) => Promise<string>) {
    const clock = manualClock();
    gateway = await startGateway(dialect, { clock });
    const { key, keyId } = await gateway.account(100_000_000);
    const conversationId = `conv-${pendingRequestId.length}-${Date.now()}`;
    // What a process killed between starting the turn and ending it leaves behind.
    const now = clock.now();
    await gateway.services.store.db
      .insertInto('conversations')
      .values({
        id: conversationId,
        key_id: keyId,
        pending_request_id: await pendingRequestId(keyId),
        created_at: now,
        updated_at: now,
      })
      .execute();
    const turn = (content: string) =>
      (gateway as TestGateway).call('POST', '/v1/chat/completions', {
        key,
        body: { model: 'sim-chat', messages: user(content), conversation_id: conversationId },
      });
    return { clock, turn, key };
  }

  it('a turn that died before its record was written is taken over after the stale age, not before', async () => {
    const { clock, turn } = await withAbandonedTurn(async () => 'req_died_before_its_record');
    const early = await turn('too early');
    expect(early.statusCode).toBe(409);
    expect(early.json()).toMatchObject({ error: { code: 'CONVERSATION_PENDING' } });
    clock.advance(staleAfterMs(parseConfig(testConfig(), 'test')) + 1);
    expect((await turn('after the stale age')).statusCode).toBe(200);
    expect((await turn('and the next one')).statusCode).toBe(200);
    await gateway?.expectLedgerClean();
  });

  it('a turn whose record left processing (finished, or swept to submission_unknown) is taken over at once', async () => {
    const { turn } = await withAbandonedTurn(async () => {
      const first = await (gateway as TestGateway).account(100_000_000);
      const done = await (gateway as TestGateway).call('POST', '/v1/embeddings', {
        key: first.key,
        body: { model: 'sim-embed', input: 'a finished request' },
      });
      expect(done.statusCode).toBe(200);
      return String(done.headers['x-service-request-id']);
    });
    expect((await turn('next turn')).statusCode).toBe(200);
    await gateway?.expectLedgerClean();
  });
});
