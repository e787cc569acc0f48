import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import { CorruptRow, parseStoredJson } from '../../src/store/stored-json.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Stored JSON columns are read with the zod schema of what their writers store
 * (docs/architecture.md, "Validation at the boundary"). Risk: a cast (`JSON.parse(text) as
 * string[]`) lets a damaged row through as whatever it happens to be — a key's model allowlist
 * that is an object, an attempt list of strings — and the fault shows up far away, or as the
 * caller's 400. A value that fails its schema is a corrupt row: a 500 whose log names the table,
 * the column and the row.
 */
it('parseStoredJson names the table, column and row of a value that fails its schema', () => {
  const at = { table: 'api_keys', column: 'models', id: 'key_1' } as const;
  expect(parseStoredJson(z.array(z.string()), '["a"]', at)).toEqual(['a']);
  expect(() => parseStoredJson(z.array(z.string()), '{"a":1}', at)).toThrow(CorruptRow);
  expect(() => parseStoredJson(z.array(z.string()), '[1]', at)).toThrow(
    'api_keys.models of row key_1 does not match its schema (0: ',
  );
  expect(() => parseStoredJson(z.array(z.string()), '[', at)).toThrow(
    'api_keys.models of row key_1 does not match its schema (not JSON: ',
  );
});

describeEachDialect('stored JSON columns read with their schema on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  let lines: string[] = [];
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
    lines = [];
  });

  async function start(): Promise<TestGateway> {
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => void (lines.push(chunk.toString()), done()),
    });
    gateway = await startGateway(dialect, { services: { logger: pino({ level: 'info' }, sink) } });
    return gateway;
  }

  function expectCorrupt(response: LightMyRequestResponse, where: string): void {
    expect(response.statusCode, response.body).toBe(500);
    expect(response.json()).toMatchObject({ error: { code: 'INTERNAL_ERROR' } });
    expect(response.body).not.toContain(where);
    expect(lines.join('')).toContain(`${where} does not match its schema`);
  }

  const admin = (client: TestGateway, method: 'GET' | 'POST', url: string) =>
    client.app.inject({
      method,
      url,
      headers: { authorization: 'Bearer test-admin-token-0123456789' },
    });

  it("a key's models or allowed_ips that fail their schema are a corrupt row, for its views and its authentication", async () => {
    const client = await start();
    const db = client.services.store.db;
    const models = await client.account(0, { models: ['sim-embed'] });
    const addresses = await client.account(0, { allowed_ips: ['10.0.0.0/8'] });
    const listed = await admin(client, 'GET', `/admin/v1/accounts/${models.accountId}/keys`);
    expect(listed.json<{ data: unknown[] }>().data).toEqual([
      expect.objectContaining({ models: ['sim-embed'] }),
    ]);

    await db
      .updateTable('api_keys')
      .set({ models: '{"sim-embed":true}' })
      .where('id', '=', models.keyId)
      .execute();
    await db
      .updateTable('api_keys')
      .set({ allowed_ips: '[]' })
      .where('id', '=', addresses.keyId)
      .execute();
    expectCorrupt(
      await admin(client, 'GET', `/admin/v1/accounts/${models.accountId}/keys`),
      `api_keys.models of row ${models.keyId}`,
    );
    expectCorrupt(
      await admin(client, 'GET', `/admin/v1/accounts/${addresses.accountId}/keys`),
      `api_keys.allowed_ips of row ${addresses.keyId}`,
    );
    // Neither key was used before: authentication reads the row now, and refuses to guess.
    expectCorrupt(
      await client.call('GET', '/v1/models', { key: models.key }),
      `api_keys.models of row ${models.keyId}`,
    );
    expectCorrupt(
      await client.call('GET', '/v1/models', { key: addresses.key }),
      `api_keys.allowed_ips of row ${addresses.keyId}`,
    );
  });

  it("an audit event's detail that is not an object is a corrupt row", async () => {
    const client = await start();
    await client.account(0);
    const before = await admin(client, 'GET', '/admin/v1/audit');
    expect(before.statusCode, before.body).toBe(200);
    const event = await client.services.store.db
      .selectFrom('audit_events')
      .select('id')
      .where('detail', 'is not', null)
      .executeTakeFirstOrThrow();
    await client.services.store.db
      .updateTable('audit_events')
      .set({ detail: '["not","an","object"]' })
      .where('id', '=', event.id)
      .execute();
    expectCorrupt(
      await admin(client, 'GET', '/admin/v1/audit'),
      `audit_events.detail of row ${event.id}`,
    );
  });

  it("a record's channel_attempts and resolution that fail their schema are a corrupt row", async () => {
    const client = await start();
    const db = client.services.store.db;
    const { key } = await client.account(1_000_000);
    const done = await client.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'hello' },
    });
    expect(done.statusCode, done.body).toBe(200);
    const requestId = String(done.headers['x-service-request-id']);
    const read = await admin(client, 'GET', `/admin/v1/requests/${requestId}`);
    expect(read.json()).toMatchObject({
      channel_attempts: [expect.objectContaining({ outcome: 'succeeded', detail: null })],
    });

    await db
      .updateTable('requests')
      .set({ channel_attempts: '[{"channel":"x","outcome":"fine"}]' })
      .where('id', '=', requestId)
      .execute();
    expectCorrupt(
      await admin(client, 'GET', `/admin/v1/requests/${requestId}`),
      `requests.channel_attempts of row ${requestId}`,
    );

    // A succeeded record names the key that settled it, if any: read before the claim.
    await db
      .updateTable('requests')
      .set({ resolution: '{"action":"settled"}' })
      .where('id', '=', requestId)
      .execute();
    const settle = await client.call('POST', `/v1/requests/${requestId}/settle`, { key });
    expectCorrupt(settle, `requests.resolution of row ${requestId}`);
    const records = await db.selectFrom('requests').select('id').execute();
    expect(records).toHaveLength(1);
  });
});
