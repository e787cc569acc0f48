import { Secret, TOTP } from 'otpauth';
import { afterEach, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import {
  CONSOLE_PASSWORD,
  consoleCall,
  consoleUser,
  type ConsoleSession,
} from '../helpers/console-session.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/** The code an authenticator app shows for `secret` at `at` (ms), or one step later. */
function codeOf(secret: string, at: number): string {
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: at });
}

describeEachDialect('console TOTP second factor on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  const requiringTotp = () =>
    startGateway(dialect, {
      config: testConfig({
        server: { ...defaultConfig.server, console_require_operator_totp: true },
      }),
    });

  const signIn = (client: TestGateway, email: string, totp?: string) =>
    client.app.inject({
      method: 'POST',
      url: '/console/api/session',
      payload: { email, password: CONSOLE_PASSWORD, ...(totp === undefined ? {} : { totp }) },
    });

  const sessionOf = (
    response: Awaited<ReturnType<typeof signIn>>,
    email: string,
  ): ConsoleSession => {
    const state = response.json<{ csrf_token: string; user: { id: string } }>();
    const header = response.headers['set-cookie'];
    const cookie = String(Array.isArray(header) ? header[0] : header).split(';')[0] ?? '';
    return { cookie, csrf: state.csrf_token, userId: state.user.id, email };
  };

  it('when required, an operator without a second factor opens no operator page until it is set up and proved', async () => {
    const client = (gateway = await requiringTotp());
    const operator = await consoleUser(client, 'ops@example.test', 'operator');
    const refused = await consoleCall(client, operator, 'GET', '/console/api/admin/accounts');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: { code: 'PERMISSION_DENIED', param: 'totp' } });

    const setup = await consoleCall(client, operator, 'POST', '/console/api/totp');
    expect(setup.statusCode, setup.body).toBe(200);
    const { secret, otpauth_url } = setup.json<{ secret: string; otpauth_url: string }>();
    expect(otpauth_url).toContain(`secret=${secret}`);
    const wrong = await consoleCall(client, operator, 'POST', '/console/api/totp/enable', {
      body: { code: '000000' === codeOf(secret, Date.now()) ? '111111' : '000000' },
    });
    expect(wrong.statusCode).toBe(403);
    expect(
      (await consoleCall(client, operator, 'GET', '/console/api/admin/accounts')).statusCode,
    ).toBe(403);
    const enabled = await consoleCall(client, operator, 'POST', '/console/api/totp/enable', {
      body: { code: codeOf(secret, Date.now()) },
    });
    expect(enabled.statusCode, enabled.body).toBe(204);
    // Proving the code in this session opens the operator pages in it.
    expect(
      (await consoleCall(client, operator, 'GET', '/console/api/admin/accounts')).statusCode,
    ).toBe(200);
    const again = await consoleCall(client, operator, 'POST', '/console/api/totp');
    expect(again.statusCode).toBe(409);
  });

  it('a user with a second factor signs in only with a fresh code; a replayed or wrong code is 401', async () => {
    const client = (gateway = await requiringTotp());
    const email = 'ops@example.test';
    const first = await consoleUser(client, email, 'operator');
    const { secret } = (await consoleCall(client, first, 'POST', '/console/api/totp')).json<{
      secret: string;
    }>();
    // Enabling claims the step of `now`; sign-in uses the next step's code (accepted: window 1).
    const now = Date.now();
    await consoleCall(client, first, 'POST', '/console/api/totp/enable', {
      body: { code: codeOf(secret, now) },
    });

    const withoutCode = await signIn(client, email);
    expect(withoutCode.statusCode).toBe(401);
    expect(withoutCode.json()).toMatchObject({ error: { param: 'totp' } });
    expect(withoutCode.headers['set-cookie']).toBeUndefined();
    const replayed = await signIn(client, email, codeOf(secret, now));
    expect(replayed.statusCode).toBe(401);
    const next = codeOf(secret, now + 30_000);
    const good = await signIn(client, email, next);
    expect(good.statusCode, good.body).toBe(200);
    expect(good.json()).toMatchObject({ user: { totp_enabled: true } });
    const session = sessionOf(good, email);
    expect(
      (await consoleCall(client, session, 'GET', '/console/api/admin/accounts')).statusCode,
    ).toBe(200);
    const replayedNext = await signIn(client, email, next);
    expect(replayedNext.statusCode).toBe(401);
    expect(replayedNext.json()).toMatchObject({ error: { param: 'totp' } });
  });

  it('a user without a second factor who sends one is told so (400 naming totp); members are not required to have one', async () => {
    const client = (gateway = await requiringTotp());
    const { accountId } = await client.account(0);
    const member = await consoleUser(client, 'member@example.test', 'member', accountId);
    expect((await consoleCall(client, member, 'GET', '/console/api/account')).statusCode).toBe(200);
    const withCode = await signIn(client, 'member@example.test', '123456');
    expect(withCode.statusCode).toBe(400);
    expect(withCode.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'totp' } });
  });
});
