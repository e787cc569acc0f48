import { randomUUID } from 'node:crypto';
import { afterEach, expect, it, vi } from 'vitest';
import { OpenAiEmbeddings } from '../../src/providers/openai-compatible/embeddings.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

describeEachDialect('duplicate storm on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it('sends 50 concurrent identical requests upstream once and charges once', async () => {
    gateway = await startGateway(dialect);
    const { accountId, key } = await gateway.account(1_000_000);
    const upstreamCalls = vi.spyOn(OpenAiEmbeddings.prototype, 'embed');
    const idempotencyKey = randomUUID();
    const client = gateway;
    const body = { model: 'sim-embed', input: 'the same words [sim:delay=100]' };
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        client.call('POST', '/v1/embeddings', { key, body, idempotencyKey }),
      ),
    );

    expect(upstreamCalls).toHaveBeenCalledTimes(1);
    const succeeded = responses.filter((response) => response.statusCode === 200);
    const inProgress = responses.filter((response) => response.statusCode === 409);
    expect(succeeded.length + inProgress.length).toBe(50);
    expect(succeeded.length).toBeGreaterThanOrEqual(1);
    for (const response of inProgress)
      expect(response.json()).toMatchObject({ error: { code: 'IDEMPOTENCY_IN_PROGRESS' } });
    const originalId = succeeded.find(
      (response) => response.headers['idempotent-replayed'] === undefined,
    )?.headers['x-service-request-id'];
    expect(originalId).toBeDefined();
    for (const response of succeeded)
      expect(response.headers['x-service-request-id']).toBe(originalId);

    // Once finished, the same key replays the stored answer, byte for byte.
    const replay = await client.call('POST', '/v1/embeddings', { key, body, idempotencyKey });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(succeeded[0]?.body);
    expect(upstreamCalls).toHaveBeenCalledTimes(1);

    const record = await client.call('GET', `/v1/requests/${String(originalId)}`, { key });
    const view = record.json<{ bill: { amount: number; captured: boolean } }>();
    expect(view.bill.captured).toBe(true);
    const captures = await gateway.services.store.db
      .selectFrom('journal')
      .select('id')
      .where('account_id', '=', accountId)
      .where('kind', '=', 'capture')
      .execute();
    expect(captures).toHaveLength(1);
    expect((await gateway.balance(accountId)).balance).toBe(1_000_000 - view.bill.amount);
  });
});
