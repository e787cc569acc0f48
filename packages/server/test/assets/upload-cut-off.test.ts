import { connect } from 'node:net';
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/media.js';

const [sqlite] = dialects;

describe('an upload cut off mid-body', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    if (sqlite === undefined) throw new Error('no sqlite');
    gateway = await startGateway(sqlite);
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('leaves no file, no asset row, no request record and no charge', async () => {
    const { key, accountId } = await gateway.account(5_000);
    const base = new URL(await gateway.listen());
    const idempotencyKey = crypto.randomUUID();
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(base.port), base.hostname, () => {
        socket.write(
          [
            `POST /v1/assets HTTP/1.1`,
            `Host: ${base.host}`,
            `Authorization: Bearer ${key}`,
            `Idempotency-Key: ${idempotencyKey}`,
            'Content-Type: image/png',
            'Content-Length: 100000',
            '',
            '',
          ].join('\r\n'),
        );
        // A real PNG start (signature and IHDR), so the first bytes pass and staging begins.
        const start = Buffer.concat([png(64, 64).subarray(0, 33), Buffer.alloc(20_000 - 33, 7)]);
        socket.write(start, () => setTimeout(() => socket.destroy(), 100));
      });
      socket.on('close', () => resolve());
      socket.on('error', reject);
    });
    // Give the server a moment to notice the broken body and clean up.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const root = (gateway.services.assets as unknown as { tempDir: string }).tempDir;
    expect(readdirSync(root)).toEqual([]);
    expect(await gateway.services.store.db.selectFrom('assets').select('id').execute()).toEqual([]);
    const record = await gateway.call('GET', `/v1/requests?idempotency_key=${idempotencyKey}`, {
      key,
    });
    expect(record.statusCode).toBe(404);
    expect(await gateway.balance(accountId)).toEqual({ balance: 5_000, held: 0, available: 5_000 });
    await gateway.expectLedgerClean();
  });
});
