import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { afterEach, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import {
  SIGN_IN_FAILURES_PER_ADDRESS,
  SIGN_UPS_PER_ADDRESS,
} from '../../src/users/login-throttle.js';
import { ADMIN_TOKEN_FAILURES_PER_WINDOW } from '../../src/http/plugins/admin-token.js';
import { createLogger } from '../../src/logger.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { CONSOLE_PASSWORD, consoleUser, type ConsoleSession } from '../helpers/console-session.js';

/**
 * Issue 35, item 2: behind the documented proxy (`server.trusted_proxies`), the console's
 * throttles counted `request.ip`, the proxy's address, so 20 wrong passwords from anyone kept
 * every user out for 15 minutes; the key allowlist alone resolved the client. One rule now
 * (auth/client-address.ts) for throttles, sessions' and audit addresses, allowlists and the log.
 */
const PROXY = '10.0.0.1';
const ATTACKER = '203.0.113.5';
const USER = '198.51.100.7';

/** A request as the proxy forwards it: from the proxy, with the client appended to the header. */
const viaProxy = (client: string, sentByClient?: string) => ({
  remoteAddress: PROXY,
  headers: {
    'x-forwarded-for': sentByClient === undefined ? client : `${sentByClient}, ${client}`,
  },
});

type From = { remoteAddress: string; headers: Record<string, string> };

describeEachDialect('one client address behind a trusted proxy, on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  const behindProxy = (options: { selfSignUp?: boolean; logTo?: string[] } = {}) => {
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => void (options.logTo?.push(String(chunk)), done()),
    });
    return startGateway(dialect, {
      config: testConfig({
        server: {
          ...defaultConfig.server,
          trusted_proxies: ['10.0.0.0/8'],
          console_self_signup: options.selfSignUp ?? false,
        },
      }),
      ...(options.logTo === undefined ? {} : { services: { logger: createLogger('info', sink) } }),
    });
  };

  /** A member of a new account, signed in (from no proxy) with CONSOLE_PASSWORD. */
  const member = async (client: TestGateway) =>
    consoleUser(client, 'user@example.test', 'member', (await client.account(0)).accountId);

  const signIn = (client: TestGateway, from: From, email: string, password: string) =>
    client.app.inject({
      method: 'POST',
      url: '/console/api/session',
      payload: { email, password },
      remoteAddress: from.remoteAddress,
      headers: from.headers,
    });

  /** SIGN_IN_FAILURES_PER_ADDRESS wrong passwords from `from`, each for another email. */
  const guessFrom = async (client: TestGateway, from: (attempt: number) => From) => {
    for (let attempt = 0; attempt < SIGN_IN_FAILURES_PER_ADDRESS; attempt += 1) {
      const wrong = await signIn(client, from(attempt), `nobody-${attempt}@example.test`, 'guess');
      expect(wrong.statusCode, wrong.body).toBe(401);
    }
  };

  const call = (
    client: TestGateway,
    from: From,
    session: ConsoleSession,
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    body?: unknown,
  ): Promise<LightMyRequestResponse> =>
    client.app.inject({
      method,
      url,
      remoteAddress: from.remoteAddress,
      headers: { ...from.headers, cookie: session.cookie, 'x-csrf-token': session.csrf },
      ...(body === undefined ? {} : { payload: body as object }),
    });

  it(`${SIGN_IN_FAILURES_PER_ADDRESS} wrong passwords from one client lock out that client only, not another behind the same proxy; its session records its own address`, async () => {
    const lines: string[] = [];
    gateway = await behindProxy({ logTo: lines });
    const user = await member(gateway);
    await guessFrom(gateway, () => viaProxy(ATTACKER));

    const attacker = await signIn(gateway, viaProxy(ATTACKER), user.email, CONSOLE_PASSWORD);
    expect(attacker.statusCode).toBe(429);
    expect(Number(attacker.headers['retry-after'])).toBeGreaterThan(0);
    // Whatever the attacker writes in front of what the proxy appends, it is still counted.
    const spoofed = await signIn(gateway, viaProxy(ATTACKER, USER), user.email, CONSOLE_PASSWORD);
    expect(spoofed.statusCode).toBe(429);

    const signedIn = await signIn(gateway, viaProxy(USER), user.email, CONSOLE_PASSWORD);
    expect(signedIn.statusCode, signedIn.body).toBe(200);
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0] ?? '';
    const sessions = await gateway.app.inject({
      method: 'GET',
      url: '/console/api/sessions',
      headers: { cookie },
    });
    const current = sessions
      .json<{ data: { current: boolean; address: string }[] }>()
      .data.find((session) => session.current);
    expect(current?.address).toBe(USER);
    // The access line names the client too, never the proxy.
    const accessLines = lines.filter((line) => line.includes('"path":"/console/api/session"'));
    expect(accessLines.length).toBeGreaterThan(SIGN_IN_FAILURES_PER_ADDRESS);
    expect(accessLines.filter((line) => line.includes(`"client":"${ATTACKER}"`)).length).toBe(
      SIGN_IN_FAILURES_PER_ADDRESS + 2,
    );
    expect(lines.some((line) => line.includes(`"client":"${PROXY}"`))).toBe(false);
  });

  it('a peer that is not a trusted proxy cannot dodge the throttle by writing X-Forwarded-For', async () => {
    gateway = await behindProxy();
    const user = await member(gateway);
    const direct = (attempt: number): From => ({
      remoteAddress: '192.0.2.9',
      headers: { 'x-forwarded-for': `198.51.100.${attempt + 10}` },
    });
    await guessFrom(gateway, direct);
    const blocked = await signIn(gateway, direct(99), user.email, CONSOLE_PASSWORD);
    expect(blocked.statusCode).toBe(429);
    // The address it claimed is untouched: the client there still signs in.
    expect((await signIn(gateway, viaProxy(USER), user.email, CONSOLE_PASSWORD)).statusCode).toBe(
      200,
    );
  });

  it('removing the second factor and changing the password are throttled per client, not per proxy', async () => {
    gateway = await behindProxy();
    const user = await member(gateway);
    const setup = await call(gateway, viaProxy(USER), user, 'POST', '/console/api/totp');
    const { secret } = setup.json<{ secret: string }>();
    const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate();
    const enabled = await call(gateway, viaProxy(USER), user, 'POST', '/console/api/totp/enable', {
      code,
    });
    expect(enabled.statusCode, enabled.body).toBe(204);

    await guessFrom(gateway, () => viaProxy(ATTACKER));
    const removed = await call(gateway, viaProxy(USER), user, 'DELETE', '/console/api/totp', {
      password: CONSOLE_PASSWORD,
    });
    expect(removed.statusCode, removed.body).toBe(204);
    const changed = await call(gateway, viaProxy(USER), user, 'POST', '/console/api/password', {
      current_password: CONSOLE_PASSWORD,
      new_password: 'another good password',
    });
    expect(changed.statusCode, changed.body).toBe(204);
  });

  it(`${SIGN_UPS_PER_ADDRESS} sign-ups from one client leave another behind the same proxy free to sign up`, async () => {
    gateway = await behindProxy({ selfSignUp: true });
    const signUp = (from: From, email: string) =>
      gateway!.app.inject({
        method: 'POST',
        url: '/console/api/signup',
        payload: { email, password: 'a good long password' },
        remoteAddress: from.remoteAddress,
        headers: from.headers,
      });
    for (let attempt = 0; attempt < SIGN_UPS_PER_ADDRESS; attempt += 1)
      expect((await signUp(viaProxy(ATTACKER), `a${attempt}@example.test`)).statusCode).toBe(201);
    expect((await signUp(viaProxy(ATTACKER), 'one-more@example.test')).statusCode).toBe(429);
    const other = await signUp(viaProxy(USER), 'someone@example.test');
    expect(other.statusCode, other.body).toBe(201);
  });

  it('wrong admin tokens lock out that client only; the audit log records the client of the admin token and of a console operator', async () => {
    gateway = await behindProxy();
    const admin = (from: From, token: string, method: 'GET' | 'POST', url: string, body?: object) =>
      gateway!.app.inject({
        method,
        url,
        remoteAddress: from.remoteAddress,
        headers: { ...from.headers, authorization: `Bearer ${token}` },
        ...(body === undefined ? {} : { payload: body }),
      });
    for (let attempt = 0; attempt <= ADMIN_TOKEN_FAILURES_PER_WINDOW; attempt += 1)
      await admin(viaProxy(ATTACKER), 'wrong-token', 'GET', '/admin/v1/audit');
    expect(
      (await admin(viaProxy(ATTACKER), ADMIN_TOKEN, 'GET', '/admin/v1/audit')).statusCode,
    ).toBe(429);
    const invited = await admin(viaProxy(USER), ADMIN_TOKEN, 'POST', '/admin/v1/invitations', {
      email: 'operator@example.test',
      role: 'operator',
    });
    expect(invited.statusCode, invited.body).toBe(201);

    const operator = await consoleUser(gateway, 'second-operator@example.test', 'operator');
    const byConsole = await call(
      gateway,
      viaProxy('198.51.100.8'),
      operator,
      'POST',
      '/console/api/admin/invitations',
      { email: 'third-operator@example.test', role: 'operator' },
    );
    expect(byConsole.statusCode, byConsole.body).toBe(201);

    const audit = await admin(viaProxy(USER), ADMIN_TOKEN, 'GET', '/admin/v1/audit');
    const addresses = audit
      .json<{ data: { action: string; actor: { kind: string; address: string | null } }[] }>()
      .data.filter((entry) => entry.action === 'console_user.invite')
      .map((entry) => `${entry.actor.kind} ${entry.actor.address}`)
      .sort();
    expect(addresses).toEqual([`admin_token ${USER}`, 'console_user 198.51.100.8']);
  });
});
