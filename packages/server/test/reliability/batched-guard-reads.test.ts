import { randomUUID } from 'node:crypto';
import type { KyselyPlugin } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { RequestStore } from '../../src/requests/request-store.js';
import { moneyService } from '../helpers/batched-money.js';
import { describeEachDialect } from '../helpers/dialects.js';
import type { TestGateway } from '../helpers/gateway.js';

/**
 * The idempotency guard's reads (requests/batched-fingerprints.ts): on PostgreSQL the reads
 * that arrive within one event-loop turn share one statement, and each still gets the answer
 * it would get alone. SQLite reads one at a time (the reference).
 */
describeEachDialect('batched idempotency guard reads on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  it('reads the idempotency keys of requests arriving together with one statement, each answered as alone (PostgreSQL)', async () => {
    const service = await moneyService(dialect, 100);
    gateway = service.gateway;
    const used = service.identity();
    expect((await service.requests.claim(used, null)).kind).toBe('claimed');
    // Counts every statement the store runs, prepared ones too (a plugin sees every result).
    let statements = 0;
    const counting: KyselyPlugin = {
      transformQuery: ({ node }) => node,
      transformResult: ({ result }) => {
        statements += 1;
        return Promise.resolve(result);
      },
    };
    const store = new RequestStore(
      gateway.services.store.db.withPlugin(counting),
      dialect.name === 'postgres',
    );
    const keys = [randomUUID(), used.idempotencyKey, ...Array.from({ length: 18 }, randomUUID)];
    const found = await Promise.all(keys.map((key) => store.fingerprintOf(service.keyId, key)));
    expect(found[1]).toEqual({ id: used.requestId, fingerprint: used.fingerprint });
    expect(found.filter((answer) => answer !== undefined)).toHaveLength(1);
    // Another API key's use of the same idempotency key is not this key's.
    expect(await store.fingerprintOf(`${service.keyId}x`, used.idempotencyKey)).toBeUndefined();
    expect(statements).toBe(dialect.name === 'postgres' ? 2 : 21);
  });
});
