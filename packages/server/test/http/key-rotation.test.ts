import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, manualClock, startGateway, type TestGateway } from '../helpers/gateway.js';

const rotate = (gateway: TestGateway, keyId: string, body?: unknown) =>
  gateway.app.inject({
    method: 'POST',
    url: `/admin/v1/keys/${keyId}/rotate`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    ...(body === undefined ? {} : { payload: body as object }),
  });

describeEachDialect('API key rotation on $name', (dialect) => {
  let gateway: TestGateway;
  const clock = manualClock();
  afterEach(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const works = async (key: string) =>
    (await gateway.call('GET', '/v1/models', { key })).statusCode === 200;
  const keysOf = async (accountId: string) =>
    (await gateway.admin('GET', `/admin/v1/accounts/${accountId}/keys`))['data'] as {
      id: string;
      replaced_by: string | null;
      disabled_at: string | null;
    }[];

  it('issues a new key with the same properties and stops the old one at once', async () => {
    gateway = await startGateway(dialect, { clock });
    const expiresAt = new Date(clock.now() + 30 * 86_400_000).toISOString();
    const { accountId, key, keyId } = await gateway.account(0, {
      kind: 'service',
      name: 'backend',
      models: ['sim-chat'],
      expires_at: expiresAt,
    });
    expect(await works(key)).toBe(true);
    const rotated = await rotate(gateway, keyId);
    expect(rotated.statusCode, rotated.body).toBe(201);
    const body = rotated.json<{
      id: string;
      key: string;
      kind: string;
      name: string;
      models: string[];
      expires_at: string;
      replaces: { id: string; replaced_by: string; disabled_at: string | null };
    }>();
    expect(body).toMatchObject({
      kind: 'service',
      name: 'backend',
      models: ['sim-chat'],
      expires_at: expiresAt,
    });
    expect(body.key).toMatch(/^tgk_/);
    expect(body.key).not.toBe(key);
    expect(body.replaces).toMatchObject({ id: keyId, replaced_by: body.id });
    expect(body.replaces.disabled_at).not.toBeNull();
    expect(await works(body.key)).toBe(true);
    expect(await works(key)).toBe(false);
    const old = await gateway.call('GET', '/v1/models', { key });
    expect(old.json()).toMatchObject({ error: { code: 'INVALID_API_KEY' } });
    expect((await keysOf(accountId)).find((listed) => listed.id === keyId)).toMatchObject({
      replaced_by: body.id,
    });
  });

  it('keeps the old key working for the overlap asked for, then stops it', async () => {
    gateway = await startGateway(dialect, { clock });
    const { key, keyId } = await gateway.account(0);
    const rotated = await rotate(gateway, keyId, { expire_old_in_seconds: 3600 });
    expect(rotated.statusCode).toBe(201);
    const fresh = rotated.json<{ key: string }>().key;
    expect(await works(key)).toBe(true);
    expect(await works(fresh)).toBe(true);
    clock.advance(3_600_000);
    expect(await works(key)).toBe(false);
    expect(await works(fresh)).toBe(true);
  });

  it('refuses to rotate a key twice, or a disabled one, and creates no key when it refuses', async () => {
    gateway = await startGateway(dialect, { clock });
    const { accountId, keyId } = await gateway.account(0);
    expect((await rotate(gateway, keyId, { expire_old_in_seconds: 60 })).statusCode).toBe(201);
    const before = (await keysOf(accountId)).length;
    const again = await rotate(gateway, keyId);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: { code: 'KEY_NOT_ROTATABLE' } });
    const other = await gateway.newKey(accountId);
    await gateway.admin('POST', `/admin/v1/keys/${other.keyId}/disable`);
    expect((await rotate(gateway, other.keyId)).statusCode).toBe(409);
    expect((await keysOf(accountId)).length).toBe(before + 1);
    const missing = await rotate(gateway, 'key_missing');
    expect(missing.statusCode).toBe(404);
  });

  it('lets exactly one of several concurrent rotations of a key through', async () => {
    gateway = await startGateway(dialect, { clock });
    const { accountId, keyId } = await gateway.account(0);
    const results = await Promise.all(
      Array.from({ length: 6 }, () => rotate(gateway, keyId, { expire_old_in_seconds: 60 })),
    );
    expect(results.map((result) => result.statusCode).sort()).toEqual([
      201, 409, 409, 409, 409, 409,
    ]);
    expect(await keysOf(accountId)).toHaveLength(2);
  });

  it('rejects a bad overlap naming the field, and changes nothing', async () => {
    gateway = await startGateway(dialect, { clock });
    const { accountId, key, keyId } = await gateway.account(0);
    for (const bad of [-1, 604_801, 1.5, '60', null]) {
      const refused = await rotate(gateway, keyId, { expire_old_in_seconds: bad });
      expect(refused.statusCode, String(bad)).toBe(400);
      expect(refused.json()).toMatchObject({
        error: { code: 'INVALID_INPUT', param: 'expire_old_in_seconds' },
      });
    }
    expect(await works(key)).toBe(true);
    expect(await keysOf(accountId)).toHaveLength(1);
  });

  it('leaves records with the key that created them (spec 5.5): readable with the old key only', async () => {
    gateway = await startGateway(dialect, { clock });
    const { key, keyId } = await gateway.account(10_000_000);
    const sent = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'before the rotation' },
    });
    expect(sent.statusCode).toBe(200);
    const recordUrl = `/v1/requests/${String(sent.headers['x-service-request-id'])}`;
    const fresh = (await rotate(gateway, keyId, { expire_old_in_seconds: 60 })).json<{
      key: string;
    }>().key;
    expect((await gateway.call('GET', recordUrl, { key })).statusCode).toBe(200);
    expect((await gateway.call('GET', recordUrl, { key: fresh })).statusCode).toBe(404);
  });
});
