import { afterEach, expect, it } from 'vitest';
import {
  SIGN_IN_FAILURES_PER_ACCOUNT,
  SIGN_IN_FAILURES_PER_ADDRESS,
} from '../../src/users/login-throttle.js';
import { passwordMatches } from '../../src/users/passwords.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { CONSOLE_PASSWORD, consoleUser, type ConsoleSession } from '../helpers/console-session.js';

/**
 * Issue 35, item 3: `POST /console/api/password` checked `current_password` without counting a
 * wrong one, so a stolen session could guess the password without limit (125 wrong values, no
 * 429). Wrong current passwords now count like failed sign-ins, by client address and email.
 */
const NEW_PASSWORD = 'a brand new password';

describeEachDialect('guessing the current password of a password change, on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  const member = async (client: TestGateway, email: string) =>
    consoleUser(client, email, 'member', (await client.account(0)).accountId);

  const changePassword = (
    client: TestGateway,
    session: ConsoleSession,
    currentPassword: string,
    address = '127.0.0.1',
  ) =>
    client.app.inject({
      method: 'POST',
      url: '/console/api/password',
      remoteAddress: address,
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf },
      payload: { current_password: currentPassword, new_password: NEW_PASSWORD },
    });

  const signIn = (client: TestGateway, email: string, password: string, address: string) =>
    client.app.inject({
      method: 'POST',
      url: '/console/api/session',
      remoteAddress: address,
      payload: { email, password },
    });

  it(`${SIGN_IN_FAILURES_PER_ACCOUNT} wrong current passwords, then 429 with Retry-After (the right one included) and the password unchanged`, async () => {
    gateway = await startGateway(dialect);
    const session = await member(gateway, 'user@example.test');
    for (let attempt = 0; attempt < SIGN_IN_FAILURES_PER_ACCOUNT; attempt += 1) {
      const wrong = await changePassword(gateway, session, `guess ${attempt}`);
      expect(wrong.statusCode, wrong.body).toBe(403);
      expect(wrong.json()).toMatchObject({
        error: { code: 'PERMISSION_DENIED', param: 'current_password' },
      });
    }
    const blocked = await changePassword(gateway, session, 'guess again', '192.0.2.50');
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // A hit is not told from a miss: the right password is refused alike, and changes nothing.
    const right = await changePassword(gateway, session, CONSOLE_PASSWORD, '192.0.2.51');
    expect(right.statusCode).toBe(429);
    const user = await gateway.services.consoleUsers.byEmail('user@example.test');
    expect(await passwordMatches(CONSOLE_PASSWORD, user?.password_hash ?? null)).toBe(true);
    expect(await passwordMatches(NEW_PASSWORD, user?.password_hash ?? null)).toBe(false);
    // The email's count is the sign-in throttle's: signing in as this user waits as well.
    expect(
      (await signIn(gateway, 'user@example.test', CONSOLE_PASSWORD, '192.0.2.52')).statusCode,
    ).toBe(429);
  });

  it('wrong current passwords count against the client address like failed sign-ins, and a blocked address changes no password', async () => {
    gateway = await startGateway(dialect);
    const guesser = '203.0.113.9';
    const perUser = SIGN_IN_FAILURES_PER_ADDRESS / 2;
    expect(perUser).toBeLessThanOrEqual(SIGN_IN_FAILURES_PER_ACCOUNT);
    for (const email of ['one@example.test', 'two@example.test']) {
      const session = await member(gateway, email);
      for (let attempt = 0; attempt < perUser; attempt += 1)
        expect(
          (await changePassword(gateway, session, `guess ${attempt}`, guesser)).statusCode,
        ).toBe(403);
    }
    const third = await member(gateway, 'three@example.test');
    expect((await signIn(gateway, third.email, CONSOLE_PASSWORD, guesser)).statusCode).toBe(429);
    expect((await changePassword(gateway, third, CONSOLE_PASSWORD, guesser)).statusCode).toBe(429);
    // From elsewhere the same user changes the password.
    const elsewhere = await changePassword(gateway, third, CONSOLE_PASSWORD, '198.51.100.20');
    expect(elsewhere.statusCode, elsewhere.body).toBe(204);
  });
});
