import { afterEach, describe, expect, it } from 'vitest';
import {
  InternalServerError,
  OutcomeUnknownError,
  type EmbeddingList,
  type RequestEntry,
} from '../src/index.js';
import { shortTimeoutsConfig } from '../../server/test/helpers/gateway.js';
import { startDropAfterSendProxy } from './helpers/fault-proxy.js';
import { clientFor, countRows, liveGateway, type TestGateway } from './helpers/gateway.js';

/*
 * The risk: a request whose answer is lost gets sent twice (charged twice), or is reported as
 * failed when it succeeded. The SDK must raise OutcomeUnknownError with the idempotency key,
 * send nothing more, and `recover` must return the original outcome.
 */

let gateway: TestGateway | undefined;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await gateway?.close();
  gateway = undefined;
});

async function placedHolds(target: TestGateway): Promise<number> {
  const metric = await target.services.metrics.holds.get();
  return metric.values.find((value) => value.labels['outcome'] === 'placed')?.value ?? 0;
}

async function expectOutcomeUnknown(promise: Promise<unknown>): Promise<OutcomeUnknownError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OutcomeUnknownError);
  return error as OutcomeUnknownError;
}

describe('a business POST whose answer is lost', () => {
  it('client timeout after sending: OutcomeUnknownError, then recover returns the original; one upstream call', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const { key } = await gateway.account(1_000_000);
    const client = clientFor(live.baseURL, key, { timeoutMs: 300 });

    const error = await expectOutcomeUnknown(
      client.embeddings.create({ model: 'sim-embed', input: 'slow words [sim:delay=1500]' }),
    );
    expect(error.reason).toBe('timeout');
    expect(error.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    const entry = (await client.journal.read(error.idempotencyKey)) as RequestEntry;
    expect(entry).toMatchObject({ kind: 'request', state: 'unknown', path: '/embeddings' });

    const record = await client.requests.recover(error.idempotencyKey, { wait: true });
    expect(record.status).toBe('succeeded');
    expect(record.idempotency_key).toBe(error.idempotencyKey);
    const result = record.result as EmbeddingList;
    expect(result.data).toHaveLength(1);
    expect(await client.journal.read(error.idempotencyKey)).toMatchObject({
      state: 'answered',
      status: 200,
      requestId: record.id,
    });
    // One request, one hold: nothing was sent again.
    expect(await countRows(gateway, 'requests')).toBe(1);
    expect(await placedHolds(gateway)).toBe(1);
    await gateway.expectLedgerClean();
  });

  it('connection dropped after the request was sent (fault proxy): OutcomeUnknownError, recover, one call', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const proxy = await startDropAfterSendProxy(new URL(live.baseURL));
    cleanups.push(proxy.close);
    const { key } = await gateway.account(1_000_000);
    const client = clientFor(proxy.baseURL, key);

    const error = await expectOutcomeUnknown(
      client.rerank.create({ model: 'sim-rerank', query: 'fox', documents: ['a fox', 'a dog'] }),
    );
    expect(error.reason).toBe('connection');
    expect(proxy.drops()).toBe(1);

    const direct = clientFor(live.baseURL, key, { journal: client.journal });
    const record = await direct.requests.recover(error.idempotencyKey, { wait: true });
    expect(record).toMatchObject({ status: 'succeeded', path: '/v1/rerank', http_status: 200 });
    expect(record.result).toMatchObject({ results: [{ index: 0 }, { index: 1 }] });
    expect(await countRows(gateway, 'requests')).toBe(1);
    expect(await placedHolds(gateway)).toBe(1);
    await gateway.expectLedgerClean();
  });

  it('gateway 504 UPSTREAM_TIMEOUT: OutcomeUnknownError (submission_unknown), the record keeps its hold', async () => {
    const live = await liveGateway(shortTimeoutsConfig());
    gateway = live.gateway;
    const { key } = await gateway.account(1_000_000);
    const client = clientFor(live.baseURL, key);

    const error = await expectOutcomeUnknown(
      client.embeddings.create({ model: 'sim-embed', input: 'never answered [sim:hang]' }),
    );
    expect(error.reason).toBe('submission_unknown');
    expect(error.cause).toBeInstanceOf(InternalServerError);
    expect(error.cause).toMatchObject({ status: 504, code: 'UPSTREAM_TIMEOUT' });
    expect(error.requestId).toMatch(/^req_/);
    const record = await client.requests.recover(error.idempotencyKey);
    expect(record).toMatchObject({ id: error.requestId, status: 'submission_unknown' });
    expect(record.reserve?.state).toBe('open');
    expect(await countRows(gateway, 'requests')).toBe(1);
  });

  it('a 502 whose record failed stays an InternalServerError (nothing was done)', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const { key } = await gateway.account(1_000_000);
    const client = clientFor(live.baseURL, key);
    const error = await client.embeddings
      .create({ model: 'sim-embed', input: 'refused [sim:fail=500]' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 502, code: 'UPSTREAM_ERROR' });
    const record = await client.requests.recover(
      (error as InternalServerError).idempotencyKey ?? '',
    );
    expect(record.status).toBe('failed');
    await gateway.expectLedgerClean();
  });
});
