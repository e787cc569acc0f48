import { afterAll, beforeAll, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { consoleCall, consoleUser } from '../helpers/console-session.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../helpers/gateway.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const embedding = { model: 'sim-embed', input: 'an agent that cannot send a key' };

/**
 * Keys for tools that cannot send a new `Idempotency-Key` per request (docs/keys.md): coding
 * agents' header settings are static. The risks: such a tool is shut out (400 on every call), or
 * it is let in at the cost of the guarantees (a request without a record key, a retry billed
 * twice, a key another caller could read), or every existing key silently loses the rule.
 */
describeEachDialect('keys with optional idempotency on $name', (dialect) => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startGateway(dialect);
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  it('a key is required by default, and the refusal says how to create an optional one', async () => {
    const { accountId, key, keyId } = await gateway.account(1_000_000);
    const keys = (await gateway.admin('GET', `/admin/v1/accounts/${accountId}/keys`)) as {
      data: { id: string; idempotency: string }[];
    };
    expect(keys.data.find((listed) => listed.id === keyId)?.idempotency).toBe('required');
    const refused = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: embedding,
      idempotencyKey: null,
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({
      error: { code: 'INVALID_INPUT', param: 'Idempotency-Key' },
    });
    expect(refused.json<{ error: { message: string } }>().error.message).toContain(
      '"idempotency": "optional"',
    );
    expect(refused.headers['idempotency-key']).toBeUndefined();
    expect(await gateway.balance(accountId)).toMatchObject({ balance: 1_000_000, held: 0 });
  });

  it('an optional key without the header gets one assigned: one record, one charge, readable and replayed by that key', async () => {
    const { accountId, key } = await gateway.account(1_000_000, { idempotency: 'optional' });
    const first = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: embedding,
      idempotencyKey: null,
    });
    expect(first.statusCode).toBe(200);
    const assigned = String(first.headers['idempotency-key']);
    expect(assigned).toMatch(UUID);
    const charged = 1_000_000 - (await gateway.balance(accountId)).balance;
    expect(charged).toBeGreaterThan(0);

    const record = await gateway.call('GET', `/v1/requests?idempotency_key=${assigned}`, { key });
    expect(record.statusCode).toBe(200);
    expect(record.json()).toMatchObject({ status: 'succeeded', idempotency_key: assigned });

    // Sent again with the key it was given: the same answer, not a second charge.
    const replay = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: embedding,
      idempotencyKey: assigned,
    });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    // A second call without the header is another request with another key.
    const second = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: embedding,
      idempotencyKey: null,
    });
    expect(second.statusCode).toBe(200);
    expect(second.headers['idempotency-key']).not.toBe(assigned);
    expect(1_000_000 - (await gateway.balance(accountId)).balance).toBe(2 * charged);
  });

  it("an optional key's own header is the one used, and a conversation id is never taken as the key", async () => {
    const { key } = await gateway.account(1_000_000, { idempotency: 'optional' });
    const own = '7d1c3a4e-2b1f-4c5d-9e8f-0a1b2c3d4e5f';
    const sent = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: embedding,
      idempotencyKey: own,
    });
    expect(sent.statusCode).toBe(200);
    expect(sent.headers['idempotency-key']).toBeUndefined();
    const record = await gateway.call('GET', `/v1/requests?idempotency_key=${own}`, { key });
    expect(record.json()).toMatchObject({ idempotency_key: own });

    // Codex CLI sends its thread's id as x-client-request-id on every request of a turn.
    const thread = '5f0c2b9e-7a1d-4e3f-8b6a-9c8d7e6f5a4b';
    const turns = await Promise.all(
      ['first', 'second'].map((input) =>
        gateway.call('POST', '/v1/embeddings', {
          key,
          body: { model: 'sim-embed', input },
          idempotencyKey: null,
          headers: { 'x-client-request-id': thread },
        }),
      ),
    );
    expect(turns.map((turn) => turn.statusCode)).toEqual([200, 200]);
    const [one, two] = turns.map((turn) => String(turn.headers['idempotency-key']));
    expect(one).not.toBe(thread);
    expect(two).not.toBe(thread);
    expect(one).not.toBe(two);
  });

  it('an assigned key is invisible to every other key, as any record is', async () => {
    const { key } = await gateway.account(1_000_000, { idempotency: 'optional' });
    const other = await gateway.account(1_000_000, { idempotency: 'optional' });
    const made = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: embedding,
      idempotencyKey: null,
    });
    const assigned = String(made.headers['idempotency-key']);
    const foreign = await gateway.call('GET', `/v1/requests?idempotency_key=${assigned}`, {
      key: other.key,
    });
    expect(foreign.statusCode).toBe(404);
  });

  it('idempotency is refused naming the field when it is not required or optional, and nothing is created', async () => {
    const { accountId } = await gateway.account(0);
    const response = await gateway.app.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${accountId}/keys`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { idempotency: 'sometimes' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      error: { code: 'INVALID_INPUT', param: 'idempotency' },
    });
    const keys = (await gateway.admin('GET', `/admin/v1/accounts/${accountId}/keys`)) as {
      data: unknown[];
    };
    expect(keys.data).toHaveLength(1);
  });

  it("a console member makes an optional key from the key form's field, and the key list shows it", async () => {
    const { accountId } = await gateway.account(1_000_000);
    const member = await consoleUser(
      gateway,
      `agent-${randomUUID()}@example.test`,
      'member',
      accountId,
    );
    const created = await consoleCall(gateway, member, 'POST', '/console/api/keys', {
      body: { name: 'codex', idempotency: 'optional' },
    });
    expect(created.statusCode, created.body).toBe(200);
    const made = created.json<{ id: string; key: string; idempotency: string }>();
    expect(made.idempotency).toBe('optional');
    const listed = await consoleCall(gateway, member, 'GET', '/console/api/keys');
    expect(
      listed
        .json<{ data: { id: string; idempotency: string }[] }>()
        .data.find((key) => key.id === made.id)?.idempotency,
    ).toBe('optional');
    const call = await gateway.call('POST', '/v1/embeddings', {
      key: made.key,
      body: embedding,
      idempotencyKey: null,
    });
    expect(call.statusCode).toBe(200);
    expect(String(call.headers['idempotency-key'])).toMatch(UUID);
  });

  it('rotation keeps the key optional', async () => {
    const { keyId } = await gateway.account(1_000_000, { idempotency: 'optional' });
    const rotated = await gateway.admin('POST', `/admin/v1/keys/${keyId}/rotate`, {});
    expect(rotated['idempotency']).toBe('optional');
    const plain = String(rotated['key']);
    const call = await gateway.call('POST', '/v1/embeddings', {
      key: plain,
      body: embedding,
      idempotencyKey: null,
    });
    expect(call.statusCode).toBe(200);
    expect(String(call.headers['idempotency-key'])).toMatch(UUID);
  });
});
