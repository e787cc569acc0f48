import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../helpers/gateway.js';

describeEachDialect('admin API on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  it('refuses user keys, missing tokens and wrong tokens', async () => {
    gateway = await startGateway(dialect);
    const { key, accountId } = await gateway.account(0);
    const url = `/admin/v1/accounts/${accountId}`;
    const withKey = await gateway.app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${key}` },
    });
    const without = await gateway.app.inject({ method: 'GET', url });
    const wrong = await gateway.app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}x` },
    });
    expect(withKey.statusCode).toBe(403);
    expect(withKey.json()).toMatchObject({ error: { code: 'PERMISSION_DENIED' } });
    expect(without.statusCode).toBe(401);
    expect(wrong.statusCode).toBe(403);
    const topUpWithKey = await gateway.app.inject({
      method: 'POST',
      url: `${url}/topups`,
      headers: { authorization: `Bearer ${key}` },
      payload: { amount: 5, reference: 'x' },
    });
    expect(topUpWithKey.statusCode).toBe(403);
    expect((await gateway.balance(accountId)).balance).toBe(0);
  });

  it('is switched off when no admin token is configured', async () => {
    gateway = await startGateway(dialect, { adminToken: undefined });
    const response = await gateway.app.inject({
      method: 'POST',
      url: '/admin/v1/accounts',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { email: 'a@b.c' },
    });
    expect(response.statusCode).toBe(404);
  });

  it('keeps the contract shapes: account, top-up, key, disable', async () => {
    gateway = await startGateway(dialect);
    const created = await gateway.app.inject({
      method: 'POST',
      url: '/admin/v1/accounts',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { email: 'Owner@Example.test' },
    });
    expect(created.statusCode).toBe(201);
    const account = created.json<{ id: string }>();
    expect(account).toMatchObject({
      id: expect.stringMatching(/^acct_/),
      email: 'owner@example.test',
      balance: 0,
      held: 0,
      available: 0,
    });
    const topped = await gateway.admin('POST', `/admin/v1/accounts/${account.id}/topups`, {
      amount: 2_500_000,
      reference: 'invoice-7',
    });
    expect(topped).toMatchObject({
      id: account.id,
      balance: 2_500_000,
      held: 0,
      available: 2_500_000,
    });
    const replayed = await gateway.app.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${account.id}/topups`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { amount: 2_500_000, reference: 'invoice-7' },
    });
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.json()).toMatchObject({ balance: 2_500_000 });
    const badAmount = await gateway.app.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${account.id}/topups`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { amount: 1.5, reference: 'r' },
    });
    expect(badAmount.statusCode).toBe(400);
    expect(badAmount.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'amount' } });

    const keyResponse = await gateway.app.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${account.id}/keys`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { kind: 'service', name: 'batch', models: ['sim-embed'] },
    });
    expect(keyResponse.statusCode).toBe(201);
    const key = keyResponse.json<{ id: string; key: string }>();
    expect(key).toMatchObject({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^tgk_/),
      kind: 'service',
      name: 'batch',
      models: ['sim-embed'],
    });
    const listed = await gateway.admin('GET', `/admin/v1/accounts/${account.id}/keys`);
    expect(JSON.stringify(listed)).not.toContain(key.key);
    const disabled = await gateway.admin('POST', `/admin/v1/keys/${key.id}/disable`);
    expect(disabled['disabled_at']).toEqual(expect.any(String));
    const badKind = await gateway.app.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${account.id}/keys`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { kind: 'root' },
    });
    expect(badKind.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'kind' } });
  });

  it('lets an account redeem a code exactly once', async () => {
    gateway = await startGateway(dialect);
    const { accountId, key } = await gateway.account(0);
    const code = await gateway.admin('POST', '/admin/v1/redemption-codes', { amount: 700_000 });
    expect(code['code']).toMatch(/^TGR-/);
    const redeemed = await gateway.call('POST', '/v1/redemptions', {
      key,
      body: { code: code['code'] },
    });
    expect(redeemed.statusCode).toBe(200);
    expect(redeemed.json()).toMatchObject({ balance: 700_000 });
    const twice = await gateway.call('POST', '/v1/redemptions', {
      key,
      body: { code: code['code'] },
    });
    expect(twice.statusCode).toBe(404);
    expect((await gateway.balance(accountId)).balance).toBe(700_000);
    const account = await gateway.call('GET', '/v1/account', { key });
    expect(account.json()).toMatchObject({ id: accountId, balance: 700_000, available: 700_000 });
  });

  it('reports a clean ledger through the admin API', async () => {
    gateway = await startGateway(dialect);
    await gateway.account(123);
    const report = await gateway.admin('GET', '/admin/v1/ledger/check');
    expect(report).toMatchObject({ ok: true, violations: [] });
  });
});
