import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { UpstreamConnector } from '../../src/providers/upstream-http.js';
import { classifyTransportError } from '../../src/providers/upstream-http.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/** A connector that cannot make a socket, as a process out of file descriptors cannot. */
function failingConnector(code: string): UpstreamConnector {
  return (_options, callback) => {
    const error = Object.assign(new Error(`${code}: cannot open a socket`), { code });
    callback(error, null);
  };
}

describe('a socket that could not even be opened is a certain non-delivery', () => {
  it.each(['EMFILE', 'ENFILE', 'EADDRNOTAVAIL', 'ECONNREFUSED'])(
    '%s is classified failed, not unknown',
    (code) => {
      const failure = classifyTransportError(Object.assign(new Error(code), { code }), null);
      expect(failure.certainty).toBe('failed');
      expect(failure.apiError.code).toBe('MODEL_UNAVAILABLE');
    },
  );

  it('a connection reset after sending stays unknown', () => {
    const failure = classifyTransportError(
      Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
      null,
    );
    expect(failure.certainty).toBe('unknown');
  });
});

describeEachDialect('out of file descriptors on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it.each(['EMFILE', 'ENFILE', 'EADDRNOTAVAIL'])(
    '%s: 503 MODEL_UNAVAILABLE, record failed, hold released, nothing charged',
    async (code) => {
      gateway = await startGateway(dialect, {
        config: testConfig(),
        services: { upstreamConnector: failingConnector(code) },
      });
      const { accountId, key } = await gateway.account(1_000_000);
      const idempotencyKey = randomUUID();
      const response = await gateway.call('POST', '/v1/embeddings', {
        key,
        idempotencyKey,
        body: { model: 'sim-embed', input: 'hello' },
      });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ error: { code: 'MODEL_UNAVAILABLE' } });
      const record = await gateway.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
        key,
      });
      expect(record.json()).toMatchObject({ status: 'failed', reserve: { state: 'released' } });
      expect(await gateway.balance(accountId)).toEqual({
        balance: 1_000_000,
        held: 0,
        available: 1_000_000,
      });
    },
  );
});
