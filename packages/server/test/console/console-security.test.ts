import { Secret, TOTP } from 'otpauth';
import { afterEach, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { SIGN_UPS_PER_ADDRESS } from '../../src/users/login-throttle.js';
import { consoleCall, consoleUser, CONSOLE_PASSWORD } from '../helpers/console-session.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

const NEW_PASSWORD = 'a brand new password';

function cookieOf(header: string | string[] | undefined): string {
  return String(Array.isArray(header) ? header[0] : header).split(';')[0] ?? '';
}

/** The current code of `secret`, as an authenticator app shows it. */
function codeOf(secret: string): string {
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() });
}

describeEachDialect(
  'console security: sign-up, key rotation, second factor on $name',
  (dialect) => {
    let gateway: TestGateway | undefined;
    afterEach(async () => {
      await gateway?.close();
      gateway = undefined;
    });

    const withSignUp = (enabled: boolean) =>
      startGateway(dialect, {
        config: testConfig({ server: { ...defaultConfig.server, console_self_signup: enabled } }),
      });

    const signUp = (client: TestGateway, body: unknown, address = '127.0.0.1') =>
      client.app.inject({
        method: 'POST',
        url: '/console/api/signup',
        payload: body as object,
        remoteAddress: address,
      });

    const accountCount = async (client: TestGateway) =>
      (await client.services.store.db.selectFrom('accounts').select('id').execute()).length;

    it('with sign-up turned off (the default) sign-up is 403, creates nothing, and the page is told so', async () => {
      const client = (gateway = await startGateway(dialect));
      const config = await client.app.inject({ method: 'GET', url: '/console/api/config' });
      expect(config.statusCode).toBe(200);
      expect(config.json()).toMatchObject({ self_signup: false });
      const before = await accountCount(client);
      const refused = await signUp(client, { email: 'new@example.test', password: NEW_PASSWORD });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ error: { code: 'PERMISSION_DENIED' } });
      expect(refused.json<{ error: { message: string } }>().error.message).toMatch(/invitation/);
      expect(refused.headers['set-cookie']).toBeUndefined();
      expect(await accountCount(client)).toBe(before);
      expect(await client.services.consoleUsers.byEmail('new@example.test')).toBeUndefined();
    });

    it('with sign-up on, a visitor gets a new account and a member session of it, and signs in again with the password', async () => {
      const client = (gateway = await withSignUp(true));
      const config = await client.app.inject({ method: 'GET', url: '/console/api/config' });
      expect(config.json()).toMatchObject({ self_signup: true });
      const created = await signUp(client, { email: 'New@Example.test', password: NEW_PASSWORD });
      expect(created.statusCode, created.body).toBe(201);
      const state = created.json<{
        csrf_token: string;
        user: { id: string; account_id: string };
      }>();
      expect(state).toMatchObject({ user: { email: 'new@example.test', role: 'member' } });
      expect(String(created.headers['set-cookie'])).toMatch(/HttpOnly/i);
      const session = {
        cookie: cookieOf(created.headers['set-cookie']),
        csrf: state.csrf_token,
        userId: state.user.id,
        email: 'new@example.test',
      };
      const account = await consoleCall(client, session, 'GET', '/console/api/account');
      expect(account.statusCode).toBe(200);
      expect(account.json()).toMatchObject({ id: state.user.account_id, balance: 0 });
      const again = await client.app.inject({
        method: 'POST',
        url: '/console/api/session',
        payload: { email: 'new@example.test', password: NEW_PASSWORD },
      });
      expect(again.statusCode).toBe(200);
      // Stored hashed: the password is nowhere in the user's row.
      const row = await client.services.consoleUsers.byEmail('new@example.test');
      expect(row?.password_hash).toMatch(/^\$argon2id\$/);
    });

    it('a sign-up with a bad email or a short password is 400 naming the field and creates nothing', async () => {
      const client = (gateway = await withSignUp(true));
      const before = await accountCount(client);
      const badEmail = await signUp(client, { email: 'not an email', password: NEW_PASSWORD });
      expect(badEmail.statusCode).toBe(400);
      expect(badEmail.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'email' } });
      const shortPassword = await signUp(client, { email: 'a@example.test', password: 'short' });
      expect(shortPassword.statusCode).toBe(400);
      expect(shortPassword.json()).toMatchObject({ error: { param: 'password' } });
      expect(await accountCount(client)).toBe(before);
    });

    it('a sign-up with an email in use (a console user, or an account without one) is one 409 naming email that tells which of them it is no more than sign-in does; nothing is created', async () => {
      const client = (gateway = await withSignUp(true));
      const holder = await client.account(0);
      await consoleUser(client, 'taken@example.test', 'member', holder.accountId);
      await client.admin('POST', '/admin/v1/accounts', { email: 'owner-only@example.test' });
      const before = await accountCount(client);
      const answers = [];
      for (const email of ['taken@example.test', 'TAKEN@example.test', 'owner-only@example.test']) {
        const refused = await signUp(client, { email, password: NEW_PASSWORD });
        expect(refused.statusCode, email).toBe(409);
        expect(refused.headers['set-cookie']).toBeUndefined();
        answers.push(refused.json<{ error: { code: string; message: string; param: string } }>());
      }
      // The same answer whether the email has a console user or only an account.
      expect(
        new Set(answers.map((answer) => JSON.stringify({ ...answer.error, request_id: 0 }))),
      ).toHaveProperty('size', 1);
      expect(answers[0]?.error).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', param: 'email' });
      expect(await accountCount(client)).toBe(before);
      // The existing user's password still opens the console; the sign-up's does not.
      const owner = await client.app.inject({
        method: 'POST',
        url: '/console/api/session',
        payload: { email: 'taken@example.test', password: NEW_PASSWORD },
      });
      expect(owner.statusCode).toBe(401);
      expect(
        (
          await client.app.inject({
            method: 'POST',
            url: '/console/api/session',
            payload: { email: 'taken@example.test', password: CONSOLE_PASSWORD },
          })
        ).statusCode,
      ).toBe(200);
    });

    it(`one address may try ${SIGN_UPS_PER_ADDRESS} sign-ups per window, then 429 with Retry-After and nothing created; another address still may`, async () => {
      const client = (gateway = await withSignUp(true));
      for (let attempt = 0; attempt < SIGN_UPS_PER_ADDRESS; attempt += 1) {
        const made = await signUp(
          client,
          { email: `u${attempt}@example.test`, password: NEW_PASSWORD },
          '10.0.0.7',
        );
        expect(made.statusCode, made.body).toBe(201);
      }
      const before = await accountCount(client);
      const throttled = await signUp(
        client,
        { email: 'one-more@example.test', password: NEW_PASSWORD },
        '10.0.0.7',
      );
      expect(throttled.statusCode).toBe(429);
      expect(throttled.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
      expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
      expect(await accountCount(client)).toBe(before);
      expect(await client.services.consoleUsers.byEmail('one-more@example.test')).toBeUndefined();
      const elsewhere = await signUp(
        client,
        { email: 'one-more@example.test', password: NEW_PASSWORD },
        '10.0.0.8',
      );
      expect(elsewhere.statusCode).toBe(201);
    });

    it("a member rotates a key of the account: the new key (shown once) works on /v1, the old one is refused; CSRF is required; another account's key is 404", async () => {
      const client = (gateway = await startGateway(dialect));
      const mine = await client.account(0);
      const member = await consoleUser(client, 'rotator@example.test', 'member', mine.accountId);
      const url = `/console/api/keys/${mine.keyId}/rotate`;

      const withoutCsrf = await consoleCall(client, member, 'POST', url, { csrf: false });
      expect(withoutCsrf.statusCode).toBe(403);
      expect(withoutCsrf.json()).toMatchObject({ error: { param: 'X-CSRF-Token' } });
      expect((await client.call('GET', '/v1/models', { key: mine.key })).statusCode).toBe(200);

      const other = await client.account(0);
      const foreign = await consoleCall(
        client,
        member,
        'POST',
        `/console/api/keys/${other.keyId}/rotate`,
      );
      expect(foreign.statusCode).toBe(404);
      const missing = await consoleCall(
        client,
        member,
        'POST',
        '/console/api/keys/key_missing/rotate',
      );
      expect(foreign.json<{ error: { message: string } }>().error.message).toBe(
        missing.json<{ error: { message: string } }>().error.message,
      );
      expect((await client.call('GET', '/v1/models', { key: other.key })).statusCode).toBe(200);

      const rotated = await consoleCall(client, member, 'POST', url);
      expect(rotated.statusCode, rotated.body).toBe(201);
      const fresh = rotated.json<{ id: string; key: string; replaces: { id: string } }>();
      expect(fresh.key).toMatch(/^tgk_/);
      expect(fresh.replaces.id).toBe(mine.keyId);
      expect((await client.call('GET', '/v1/models', { key: fresh.key })).statusCode).toBe(200);
      const old = await client.call('GET', '/v1/models', { key: mine.key });
      expect(old.statusCode).toBe(401);
      // The list never shows a plaintext again; the old key names its successor.
      const listed = await consoleCall(client, member, 'GET', '/console/api/keys');
      expect(listed.body).not.toContain(fresh.key);
      expect(
        listed.json<{ data: { id: string; replaced_by: string | null }[] }>().data,
      ).toContainEqual(expect.objectContaining({ id: mine.keyId, replaced_by: fresh.id }));
      // A rotated key is not rotated twice (no second key minted).
      const twice = await consoleCall(client, member, 'POST', url);
      expect(twice.statusCode).toBe(409);
      expect(twice.json()).toMatchObject({ error: { code: 'KEY_NOT_ROTATABLE' } });
    });

    it('a member rotating with an overlap keeps the old key working until then; a bad overlap is 400 naming it', async () => {
      const client = (gateway = await startGateway(dialect));
      const mine = await client.account(0);
      const member = await consoleUser(client, 'overlap@example.test', 'member', mine.accountId);
      const url = `/console/api/keys/${mine.keyId}/rotate`;
      const bad = await consoleCall(client, member, 'POST', url, {
        body: { expire_old_in_seconds: -1 },
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({ error: { param: 'expire_old_in_seconds' } });
      const rotated = await consoleCall(client, member, 'POST', url, {
        body: { expire_old_in_seconds: 3600 },
      });
      expect(rotated.statusCode).toBe(201);
      expect((await client.call('GET', '/v1/models', { key: mine.key })).statusCode).toBe(200);
    });

    it("the create form's models are the configured ones; a key made with one of them and an expiry may call only it", async () => {
      const client = (gateway = await startGateway(dialect));
      const mine = await client.account(0);
      const member = await consoleUser(client, 'models@example.test', 'member', mine.accountId);
      const models = await consoleCall(client, member, 'GET', '/console/api/models');
      expect(models.statusCode).toBe(200);
      const ids = models.json<{ data: { id: string }[] }>().data.map((model) => model.id);
      expect(ids).toEqual(client.services.config.models.map((model) => model.id));
      const chosen = ids[0] ?? '';
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
      const created = await consoleCall(client, member, 'POST', '/console/api/keys', {
        body: { name: 'one model', models: [chosen], expires_at: expiresAt },
      });
      expect(created.statusCode, created.body).toBe(200);
      const key = created.json<{ key: string; models: string[]; expires_at: string }>();
      expect(key.models).toEqual([chosen]);
      expect(Date.parse(key.expires_at)).toBe(Date.parse(expiresAt));
      const seen = await client.call('GET', '/v1/models', { key: key.key });
      expect(seen.json<{ data: { id: string }[] }>().data.map((model) => model.id)).toEqual([
        chosen,
      ]);
    });

    it('a user removes the second factor with a current code or the password; a wrong proof is 403 and the factor stays', async () => {
      const client = (gateway = await startGateway(dialect));
      const mine = await client.account(0);
      const member = await consoleUser(client, 'factor@example.test', 'member', mine.accountId);
      const noFactor = await consoleCall(client, member, 'DELETE', '/console/api/totp', {
        body: { password: CONSOLE_PASSWORD },
      });
      expect(noFactor.statusCode).toBe(400);

      const enable = async () => {
        const setup = await consoleCall(client, member, 'POST', '/console/api/totp');
        const { secret } = setup.json<{ secret: string }>();
        const enabled = await consoleCall(client, member, 'POST', '/console/api/totp/enable', {
          body: { code: codeOf(secret) },
        });
        expect(enabled.statusCode, enabled.body).toBe(204);
        return secret;
      };
      const totpEnabled = async () =>
        (await consoleCall(client, member, 'GET', '/console/api/session')).json<{
          user: { totp_enabled: boolean };
        }>().user.totp_enabled;

      await enable();
      const wrongPassword = await consoleCall(client, member, 'DELETE', '/console/api/totp', {
        body: { password: 'not the password' },
      });
      expect(wrongPassword.statusCode).toBe(403);
      expect(wrongPassword.json()).toMatchObject({ error: { param: 'password' } });
      const wrongCode = await consoleCall(client, member, 'DELETE', '/console/api/totp', {
        body: { code: '12345x' },
      });
      expect(wrongCode.statusCode).toBe(403);
      expect(wrongCode.json()).toMatchObject({ error: { param: 'code' } });
      const withoutCsrf = await consoleCall(client, member, 'DELETE', '/console/api/totp', {
        body: { password: CONSOLE_PASSWORD },
        csrf: false,
      });
      expect(withoutCsrf.statusCode).toBe(403);
      expect(await totpEnabled()).toBe(true);

      const byPassword = await consoleCall(client, member, 'DELETE', '/console/api/totp', {
        body: { password: CONSOLE_PASSWORD },
      });
      expect(byPassword.statusCode, byPassword.body).toBe(204);
      expect(await totpEnabled()).toBe(false);
      // Signing in needs no code any more.
      const plain = await client.app.inject({
        method: 'POST',
        url: '/console/api/session',
        payload: { email: 'factor@example.test', password: CONSOLE_PASSWORD },
      });
      expect(plain.statusCode).toBe(200);

      // Enabling claimed the current step, so removal by code waits for the next step's code.
      const secret = await enable();
      const next = new TOTP({ secret: Secret.fromBase32(secret) }).generate({
        timestamp: Date.now() + 30_000,
      });
      const byCode = await consoleCall(client, member, 'DELETE', '/console/api/totp', {
        body: { code: next },
      });
      expect(byCode.statusCode, byCode.body).toBe(204);
      expect(await totpEnabled()).toBe(false);
    });

    it('an operator may not remove the factor when operators must have one', async () => {
      const client = (gateway = await startGateway(dialect, {
        config: testConfig({
          server: { ...defaultConfig.server, console_require_operator_totp: true },
        }),
      }));
      const operator = await consoleUser(client, 'ops@example.test', 'operator');
      const setup = await consoleCall(client, operator, 'POST', '/console/api/totp');
      const { secret } = setup.json<{ secret: string }>();
      await consoleCall(client, operator, 'POST', '/console/api/totp/enable', {
        body: { code: codeOf(secret) },
      });
      const refused = await consoleCall(client, operator, 'DELETE', '/console/api/totp', {
        body: { password: CONSOLE_PASSWORD },
      });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ error: { param: 'totp' } });
    });
  },
);
