import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  SIGN_IN_FAILURES_PER_ACCOUNT,
  SIGN_IN_FAILURES_PER_ADDRESS,
} from '../../src/users/login-throttle.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

const PASSWORD = 'correct horse battery';

interface Signed {
  cookie: string;
  csrf: string;
}

function cookieOf(response: LightMyRequestResponse): string {
  const header = response.headers['set-cookie'];
  const first = Array.isArray(header) ? header[0] : header;
  const pair = first?.split(';')[0];
  if (pair === undefined) throw new Error('no Set-Cookie');
  return pair;
}

describeEachDialect('console API on $name', (dialect) => {
  let gateway: TestGateway;
  beforeEach(async () => {
    gateway = await startGateway(dialect);
  });
  afterEach(async () => gateway.close());

  const consoleCall = (
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    options: {
      signed?: Signed;
      csrf?: boolean;
      body?: unknown;
      headers?: Record<string, string>;
    } = {},
  ) =>
    gateway.app.inject({
      method,
      url,
      headers: {
        ...(options.signed === undefined ? {} : { cookie: options.signed.cookie }),
        ...(options.signed !== undefined && options.csrf !== false
          ? { 'x-csrf-token': options.signed.csrf }
          : {}),
        ...options.headers,
      },
      ...(options.body === undefined ? {} : { payload: options.body as object }),
    });

  /** An account with `balance`, one key, and a member of it who has set PASSWORD. */
  async function member(balance = 0) {
    const account = await gateway.account(balance);
    const email = `member-${account.accountId}@example.test`.toLowerCase();
    const invitation = await gateway.services.consoleUsers.invite({
      email,
      role: 'member',
      account_id: account.accountId,
    });
    const token = invitation.invite_url.split('/').at(-1) ?? '';
    const accepted = await consoleCall('POST', `/console/api/invitations/${token}`, {
      body: { password: PASSWORD },
    });
    expect(accepted.statusCode).toBe(200);
    return { ...account, email, token };
  }

  async function signIn(email: string, password = PASSWORD, address = '127.0.0.1') {
    return gateway.app.inject({
      method: 'POST',
      url: '/console/api/session',
      payload: { email, password },
      remoteAddress: address,
    });
  }

  async function signedIn(email: string): Promise<Signed> {
    const response = await signIn(email);
    expect(response.statusCode).toBe(200);
    return { cookie: cookieOf(response), csrf: response.json<{ csrf_token: string }>().csrf_token };
  }

  it('an invited member sets a password, signs in with an HttpOnly, Lax cookie scoped to /console, and reads the session', async () => {
    const { email, accountId } = await member();
    const response = await signIn(email);
    expect(response.statusCode).toBe(200);
    const setCookie = String(response.headers['set-cookie']);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/Path=\/console/);
    expect(setCookie).not.toMatch(/Secure/i);
    const signed = {
      cookie: cookieOf(response),
      csrf: response.json<{ csrf_token: string }>().csrf_token,
    };
    const session = await consoleCall('GET', '/console/api/session', { signed });
    expect(session.statusCode).toBe(200);
    expect(session.json()).toMatchObject({
      user: { email, role: 'member', account_id: accountId },
      csrf_token: signed.csrf,
    });
    expect(JSON.stringify(session.json())).not.toContain('argon2');
  });

  it('an invitation link sets a password once; a used or made-up link is 404 and changes nothing', async () => {
    const { token, email } = await member();
    const again = await consoleCall('POST', `/console/api/invitations/${token}`, {
      body: { password: 'another password 123' },
    });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toMatchObject({ error: { code: 'NOT_FOUND', param: 'token' } });
    expect((await signIn(email, 'another password 123')).statusCode).toBe(401);
    expect((await signIn(email)).statusCode).toBe(200);
    const madeUp = await consoleCall('POST', `/console/api/invitations/${'a'.repeat(32)}`, {
      body: { password: PASSWORD },
    });
    expect(madeUp.statusCode).toBe(404);
  });

  it('a short password is refused naming the field, and the invitation stays usable', async () => {
    const account = await gateway.account(0);
    const invitation = await gateway.services.consoleUsers.invite({
      email: 'short@example.test',
      role: 'member',
      account_id: account.accountId,
    });
    const token = invitation.invite_url.split('/').at(-1) ?? '';
    const short = await consoleCall('POST', `/console/api/invitations/${token}`, {
      body: { password: 'short' },
    });
    expect(short.statusCode).toBe(400);
    expect(short.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'password' } });
    const good = await consoleCall('POST', `/console/api/invitations/${token}`, {
      body: { password: PASSWORD },
    });
    expect(good.statusCode).toBe(200);
  });

  it('a wrong password and an unknown email get the same 401', async () => {
    const { email } = await member();
    const wrong = await signIn(email, 'wrong password 123');
    const unknown = await signIn('nobody@example.test', PASSWORD);
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json<{ error: { message: string } }>().error.message).toBe(
      unknown.json<{ error: { message: string } }>().error.message,
    );
    expect(wrong.headers['set-cookie']).toBeUndefined();
  });

  it('guessing one account is throttled (429, even for the right password) while the address may still sign in elsewhere', async () => {
    const { email } = await member();
    const other = await member();
    for (let attempt = 0; attempt < SIGN_IN_FAILURES_PER_ACCOUNT; attempt += 1)
      expect(
        (await signIn(email, `wrong password ${attempt}`, `10.0.0.${attempt}`)).statusCode,
      ).toBe(401);
    const blocked = await signIn(email, PASSWORD, '10.0.1.1');
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    expect(blocked.headers['retry-after']).toBeDefined();
    expect((await signIn(other.email, PASSWORD, '10.0.1.1')).statusCode).toBe(200);
  });

  it('guessing from one address is throttled across emails (429)', async () => {
    const { email } = await member();
    for (let attempt = 0; attempt < SIGN_IN_FAILURES_PER_ADDRESS; attempt += 1)
      await signIn(`guess${attempt}@example.test`, 'wrong password', '10.9.9.9');
    expect((await signIn(email, PASSWORD, '10.9.9.9')).statusCode).toBe(429);
    expect((await signIn(email, PASSWORD, '10.9.9.8')).statusCode).toBe(200);
  });

  it('a state-changing console call without the CSRF token is 403 and changes nothing', async () => {
    const { email, accountId } = await member();
    const signed = await signedIn(email);
    const before = (await gateway.services.keys.list(accountId)).length;
    const missing = await consoleCall('POST', '/console/api/keys', {
      signed,
      csrf: false,
      body: { name: 'x' },
    });
    expect(missing.statusCode).toBe(403);
    expect(missing.json()).toMatchObject({
      error: { code: 'PERMISSION_DENIED', param: 'X-CSRF-Token' },
    });
    const wrong = await consoleCall('POST', '/console/api/keys', {
      signed: { ...signed, csrf: 'x'.repeat(43) },
      body: { name: 'x' },
    });
    expect(wrong.statusCode).toBe(403);
    const signOut = await consoleCall('DELETE', '/console/api/session', { signed, csrf: false });
    expect(signOut.statusCode).toBe(403);
    expect((await gateway.services.keys.list(accountId)).length).toBe(before);
    expect((await consoleCall('GET', '/console/api/session', { signed })).statusCode).toBe(200);
  });

  it('a console session never authorises /v1, and an API key never authorises /console/api', async () => {
    const { email, key } = await member(1_000_000);
    const signed = await signedIn(email);
    const withCookie = await gateway.app.inject({
      method: 'GET',
      url: '/v1/requests',
      headers: { cookie: signed.cookie, 'x-csrf-token': signed.csrf },
    });
    expect(withCookie.statusCode).toBe(401);
    const withKey = await consoleCall('GET', '/console/api/account', {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(withKey.statusCode).toBe(401);
    expect(withKey.json()).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
    const keysWithKey = await consoleCall('GET', '/console/api/keys', {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(keysWithKey.statusCode).toBe(401);
  });

  it('a member sees its account, creates a key shown once, disables it, redeems a code and lists every key’s records', async () => {
    const { email, accountId, key } = await member(0);
    const signed = await signedIn(email);
    const created = await consoleCall('POST', '/console/api/keys', {
      signed,
      body: { name: 'laptop' },
    });
    expect(created.statusCode).toBe(200);
    const newKey = created.json<{ id: string; key: string }>();
    expect(newKey.key).toMatch(/^tgk_/);
    const listed = await consoleCall('GET', '/console/api/keys', { signed });
    expect(listed.body).not.toContain(newKey.key);
    expect(listed.json<{ data: { id: string }[] }>().data.map((row) => row.id)).toContain(
      newKey.id,
    );

    const code = await gateway.services.accounts.createRedemptionCode({ amount: 2_000_000 });
    const redeemed = await consoleCall('POST', '/console/api/redemptions', {
      signed,
      body: { code: code.code },
    });
    expect(redeemed.statusCode).toBe(200);
    expect(redeemed.json()).toMatchObject({ balance: 2_000_000, available: 2_000_000 });
    const twice = await consoleCall('POST', '/console/api/redemptions', {
      signed,
      body: { code: code.code },
    });
    expect(twice.statusCode).toBe(404);
    expect((await gateway.balance(accountId)).balance).toBe(2_000_000);

    const chat = { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] };
    expect(
      (await gateway.call('POST', '/v1/chat/completions', { key, body: chat })).statusCode,
    ).toBe(200);
    expect(
      (await gateway.call('POST', '/v1/chat/completions', { key: newKey.key, body: chat }))
        .statusCode,
    ).toBe(200);
    const requests = await consoleCall('GET', '/console/api/requests', { signed });
    expect(requests.statusCode).toBe(200);
    const keyIds = requests.json<{ data: { key_id: string }[] }>().data.map((row) => row.key_id);
    expect(keyIds).toHaveLength(2);
    expect(new Set(keyIds).size).toBe(2);

    const disabled = await consoleCall('POST', `/console/api/keys/${newKey.id}/disable`, {
      signed,
    });
    expect(disabled.statusCode).toBe(200);
    expect(disabled.json<{ disabled_at: string | null }>().disabled_at).not.toBeNull();
    expect(
      (await gateway.call('POST', '/v1/chat/completions', { key: newKey.key, body: chat }))
        .statusCode,
    ).toBe(401);
    await gateway.expectLedgerClean();
  });

  it("a member cannot touch another account's key, nor see its records", async () => {
    const mine = await member(1_000_000);
    const theirs = await member(1_000_000);
    const signed = await signedIn(mine.email);
    const chat = { model: 'sim-chat', messages: [{ role: 'user', content: 'hi' }] };
    await gateway.call('POST', '/v1/chat/completions', { key: theirs.key, body: chat });
    const disable = await consoleCall('POST', `/console/api/keys/${theirs.keyId}/disable`, {
      signed,
    });
    expect(disable.statusCode).toBe(404);
    const keys = await gateway.services.keys.list(theirs.accountId);
    expect(keys.every((row) => row.disabled_at === null)).toBe(true);
    const requests = await consoleCall('GET', '/console/api/requests', { signed });
    expect(requests.json<{ data: unknown[] }>().data).toEqual([]);
  });

  it('an operator has no account pages (403)', async () => {
    const invitation = await gateway.services.consoleUsers.invite({
      email: 'op@example.test',
      role: 'operator',
    });
    const token = invitation.invite_url.split('/').at(-1) ?? '';
    await consoleCall('POST', `/console/api/invitations/${token}`, {
      body: { password: PASSWORD },
    });
    const signed = await signedIn('op@example.test');
    const account = await consoleCall('GET', '/console/api/account', { signed });
    expect(account.statusCode).toBe(403);
  });

  it('signing out ends the session; a password change ends the other sessions only', async () => {
    const { email } = await member();
    const first = await signedIn(email);
    const second = await signedIn(email);
    const third = await signedIn(email);
    const sessions = await consoleCall('GET', '/console/api/sessions', { signed: first });
    expect(sessions.json<{ data: unknown[] }>().data).toHaveLength(3);
    const changed = await consoleCall('POST', '/console/api/password', {
      signed: first,
      body: { current_password: PASSWORD, new_password: 'a new password 456' },
    });
    expect(changed.statusCode).toBe(204);
    expect((await consoleCall('GET', '/console/api/session', { signed: second })).statusCode).toBe(
      401,
    );
    expect((await consoleCall('GET', '/console/api/session', { signed: third })).statusCode).toBe(
      401,
    );
    expect((await consoleCall('GET', '/console/api/session', { signed: first })).statusCode).toBe(
      200,
    );
    expect((await signIn(email)).statusCode).toBe(401);
    const out = await consoleCall('DELETE', '/console/api/session', { signed: first });
    expect(out.statusCode).toBe(204);
    expect((await consoleCall('GET', '/console/api/session', { signed: first })).statusCode).toBe(
      401,
    );
  });

  it('a user revokes one of their sessions by id; another user’s session id is 404', async () => {
    const { email } = await member();
    const other = await member();
    const first = await signedIn(email);
    const second = await signedIn(email);
    const theirs = await signedIn(other.email);
    const theirId = (await consoleCall('GET', '/console/api/session', { signed: theirs })).json<{
      session_id: string;
    }>().session_id;
    const secondId = (await consoleCall('GET', '/console/api/session', { signed: second })).json<{
      session_id: string;
    }>().session_id;
    expect(
      (await consoleCall('DELETE', `/console/api/sessions/${theirId}`, { signed: first }))
        .statusCode,
    ).toBe(404);
    expect((await consoleCall('GET', '/console/api/session', { signed: theirs })).statusCode).toBe(
      200,
    );
    expect(
      (await consoleCall('DELETE', `/console/api/sessions/${secondId}`, { signed: first }))
        .statusCode,
    ).toBe(204);
    expect((await consoleCall('GET', '/console/api/session', { signed: second })).statusCode).toBe(
      401,
    );
  });
});
