import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { afterEach, describe, expect, it } from 'vitest';
import { newConsoleToken } from '../../src/users/console-tokens.js';
import { createLogger } from '../../src/logger.js';
import { CREDENTIAL_ROUTES, pathForLog, redactSecrets } from '../../src/log-redaction.js';
import { describeEachDialect, dialects } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/media.js';

/**
 * Issue 35, item 1: an invitation's token (32 characters) reached the access log whole, because
 * paths were redacted by length (40 or more letters and digits) rather than by what the segment
 * is. A token read from the log accepted its invitation and gave an operator session. Every
 * credential a console flow uses must stay out of every log line, not even partly.
 */

interface Signed {
  readonly cookie: string;
  readonly csrf: string;
}

const cookieOf = (response: LightMyRequestResponse) => {
  const header = response.headers['set-cookie'];
  return String(Array.isArray(header) ? header[0] : header).split(';')[0] ?? '';
};

/** The code an authenticator app shows for `secret` at `at` (ms). */
const codeOf = (secret: string, at: number) =>
  new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: at });

/** `secret` whole and every `size`-character piece of it: what a partial leak would show. */
function piecesOf(secret: string, size = 8): string[] {
  if (secret.length <= size) return [secret];
  return [
    secret,
    ...Array.from({ length: secret.length - size + 1 }, (_, at) => secret.slice(at, at + size)),
  ];
}

describeEachDialect('a console flow writes no credential to the log, on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  it('invitations, sign-in, TOTP, a password change, a key, a share link and sign-out leave no token, secret or password in any log line', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => void (lines.push(chunk.toString()), done()),
    });
    gateway = await startGateway(dialect, { services: { logger: createLogger('trace', sink) } });
    const client = gateway;
    /** Every credential the flow sees, to look for in the log at the end. */
    const credentials = new Map<string, string>();
    const remember = (what: string, secret: string) => {
      expect(secret.length, what).toBeGreaterThanOrEqual(8);
      credentials.set(what, secret);
    };
    const call = (
      method: 'GET' | 'HEAD' | 'POST' | 'DELETE',
      url: string,
      options: { signed?: Signed; body?: unknown; headers?: Record<string, string> } = {},
    ) =>
      client.app.inject({
        method,
        url,
        headers: {
          ...(options.signed === undefined
            ? {}
            : { cookie: options.signed.cookie, 'x-csrf-token': options.signed.csrf }),
          ...options.headers,
        },
        ...(options.body === undefined ? {} : { payload: options.body as object }),
      });
    const tokenOf = (inviteUrl: unknown) => String(inviteUrl).split('/').at(-1) ?? '';
    /** Opens an invitation as a browser does (the page, then who it is for), sets `password`. */
    const acceptInvitation = async (token: string, password: string) => {
      expect((await call('GET', `/console/invite/${token}`)).statusCode).toBeLessThan(500);
      const read = await call('GET', `/console/api/invitations/${token}`);
      expect(read.statusCode, read.body).toBe(200);
      const accepted = await call('POST', `/console/api/invitations/${token}`, {
        body: { password },
      });
      expect(accepted.statusCode, accepted.body).toBe(200);
      // A used link, read again: 404, and still logged without its token.
      expect((await call('GET', `/console/api/invitations/${token}`)).statusCode).toBe(404);
    };
    const signIn = async (email: string, password: string, totp?: string) => {
      const response = await call('POST', '/console/api/session', {
        body: { email, password, ...(totp === undefined ? {} : { totp }) },
      });
      expect(response.statusCode, response.body).toBe(200);
      const signed = {
        cookie: cookieOf(response),
        csrf: response.json<{ csrf_token: string }>().csrf_token,
      };
      remember(`session cookie of ${email}`, signed.cookie.split('=')[1] ?? '');
      remember(`CSRF token of ${email}`, signed.csrf);
      return signed;
    };

    // An operator, invited with the admin token.
    const operatorPassword = `operator ${randomUUID()}`;
    remember('operator password', operatorPassword);
    const operatorInvite = await client.admin('POST', '/admin/v1/invitations', {
      email: 'operator@example.test',
      role: 'operator',
    });
    const operatorToken = tokenOf(operatorInvite['invite_url']);
    remember('operator invitation', operatorToken);
    await acceptInvitation(operatorToken, operatorPassword);
    const operator = await signIn('operator@example.test', operatorPassword);

    // A member, invited by the operator from the console.
    const { accountId } = await client.account(1_000_000);
    const memberPassword = `member ${randomUUID()}`;
    remember('member password', memberPassword);
    const memberInvite = await call('POST', '/console/api/admin/invitations', {
      signed: operator,
      body: { email: 'member@example.test', role: 'member', account_id: accountId },
    });
    expect(memberInvite.statusCode, memberInvite.body).toBe(201);
    const memberToken = tokenOf(memberInvite.json<{ invite_url: string }>().invite_url);
    remember('member invitation', memberToken);
    await acceptInvitation(memberToken, memberPassword);
    let member = await signIn('member@example.test', memberPassword);

    // A made-up invitation link, in the shapes a browser or a script may send it.
    const madeUp = newConsoleToken();
    remember('made-up invitation', madeUp);
    for (const url of [
      `/console/invite/${madeUp}`,
      `/console/invite/${madeUp}/`,
      `/console//invite/${madeUp}`,
      `/console/./invite/${madeUp}`,
      `/console/%69nvite/${madeUp}`,
      `/console/api/invitations/${madeUp}`,
      `/console/api/invitations/${madeUp}/extra`,
      `/console/api/invitations/${madeUp}%ZZ`,
      `/Console/API/Invitations/${madeUp}`,
    ])
      expect((await call('GET', url)).statusCode, url).toBeGreaterThanOrEqual(200);

    // The member's second factor: set up, enabled, then a sign-in with it.
    const setup = await call('POST', '/console/api/totp', { signed: member });
    expect(setup.statusCode, setup.body).toBe(200);
    const { secret } = setup.json<{ secret: string }>();
    remember('TOTP secret', secret);
    const now = Date.now();
    const enabled = await call('POST', '/console/api/totp/enable', {
      signed: member,
      body: { code: codeOf(secret, now) },
    });
    expect(enabled.statusCode, enabled.body).toBe(204);
    expect((await call('DELETE', '/console/api/session', { signed: member })).statusCode).toBe(204);
    member = await signIn('member@example.test', memberPassword, codeOf(secret, now + 30_000));
    expect((await call('GET', '/console/api/sessions', { signed: member })).statusCode).toBe(200);

    // A key made in the console, shown once.
    const key = await call('POST', '/console/api/keys', {
      signed: member,
      body: { name: 'from the console' },
    });
    expect(key.statusCode, key.body).toBe(200);
    remember('API key', key.json<{ key: string }>().key);

    // A share link: an upload, asked for, approved by the operator, read by anyone.
    const uploaded = await call('POST', '/console/api/assets', {
      signed: member,
      body: png(8, 8),
      headers: { 'content-type': 'image/png', 'idempotency-key': randomUUID() },
    });
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    const asked = await call('POST', '/console/api/shares', {
      signed: member,
      body: { asset_id: uploaded.json<{ data: { id: string } }>().data.id },
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(asked.statusCode, asked.body).toBe(202);
    const shareId = asked.json<{ id: string }>().id;
    const approved = await call('POST', `/console/api/admin/shares/${shareId}/approve`, {
      signed: operator,
      body: {},
    });
    expect(approved.statusCode, approved.body).toBe(200);
    const share = await call('GET', `/console/api/shares/${shareId}`, { signed: member });
    const publicUrl = share.json<{ public_url: string }>().public_url;
    remember('share token', publicUrl.split('/').at(-1) ?? '');
    expect((await call('GET', publicUrl)).statusCode).toBe(200);
    expect((await call('HEAD', publicUrl)).statusCode).toBe(200);
    expect((await call('GET', `${publicUrl}/more`)).statusCode).toBe(404);

    // A password change, and the sign-outs.
    const newPassword = `changed ${randomUUID()}`;
    remember('new member password', newPassword);
    const changed = await call('POST', '/console/api/password', {
      signed: member,
      body: { current_password: memberPassword, new_password: newPassword },
    });
    expect(changed.statusCode, changed.body).toBe(204);
    for (const signed of [member, operator])
      expect((await call('DELETE', '/console/api/session', { signed })).statusCode).toBe(204);

    // Nothing above is in any line, not even an 8-character piece of it; and the flow was
    // logged (one access line per call), its credential routes with their tokens redacted.
    for (const [what, secret] of credentials)
      for (const piece of piecesOf(secret)) {
        const leaking = lines.find((line) => line.includes(piece));
        expect(leaking, `${what}: "${piece}" is in the log`).toBeUndefined();
      }
    expect(lines.some((line) => line.includes('"path":"/console/invite/[redacted]"'))).toBe(true);
    expect(lines.some((line) => line.includes('/console/api/invitations/[redacted]'))).toBe(true);
    expect(lines.some((line) => line.includes('"path":"/s/[redacted]"'))).toBe(true);
  });
});

/**
 * Every full route path of `app`, read from Fastify's route tree (`printRoutes`), where each
 * line is a node under the one above it at one indentation less.
 */
function routePaths(tree: string): string[] {
  const stack: string[] = [];
  const paths: string[] = [];
  for (const line of tree.split('\n')) {
    const branch = line.indexOf('── ');
    if (branch === -1) continue;
    const depth = (branch - 1) / 4;
    const [segment = ''] = line.slice(branch + 3).split(' (');
    stack[depth] = `${depth === 0 ? '' : (stack[depth - 1] ?? '')}${segment}`;
    stack.length = depth + 1;
    if (line.includes(' (')) paths.push(stack[depth] ?? '');
  }
  return paths;
}

/** Parameter names that say the segment is a credential: such a route must be redacted. */
const CREDENTIAL_NAMES = /^:(token|secret|code|password|signature|key|invitation)$/i;

describe('credential routes', () => {
  it('every route with a credential parameter has it redacted, and every credential route is a route', async () => {
    const [sqlite] = dialects;
    const gateway = await startGateway(sqlite!);
    try {
      const paths = routePaths(gateway.app.printRoutes({ commonPrefix: false }));
      expect(paths).toContain('/v1/requests/:id');
      const withCredentials = paths.filter((path) =>
        path.split('/').some((segment) => CREDENTIAL_NAMES.test(segment)),
      );
      expect(withCredentials.sort()).toEqual(Object.values(CREDENTIAL_ROUTES).sort());
      for (const route of withCredentials) {
        const sample = route.replace(/:[A-Za-z_]+/g, 'abc');
        const logged = pathForLog(sample).split('/');
        route.split('/').forEach((segment, at) => {
          if (segment.startsWith(':')) expect(logged[at], route).toBe('[redacted]');
          else expect(logged[at], route).toBe(segment);
        });
      }
      for (const route of Object.values(CREDENTIAL_ROUTES))
        expect(gateway.app.hasRoute({ method: 'GET', url: route }), route).toBe(true);
    } finally {
      await gateway.close();
    }
  });

  it('redacts the credential of each route by where it stands, whatever its length or spelling', () => {
    const short = 'abc';
    expect(pathForLog(`/console/invite/${short}`)).toBe('/console/invite/[redacted]');
    expect(pathForLog(`/console/api/invitations/${short}?x=1`)).toBe(
      '/console/api/invitations/[redacted]',
    );
    expect(pathForLog(`/s/${short}`)).toBe('/s/[redacted]');
    expect(pathForLog(`/s/${short}/x`)).toBe('/s/[redacted]/x');
    expect(pathForLog(`/console//invite/${short}/`)).toBe('/console//invite/[redacted]/');
    expect(pathForLog(`/console/x/../invite/${short}`)).toBe('/console/x/../invite/[redacted]');
    expect(pathForLog(`/console/%69nvite/${short}`)).toBe('/console/%69nvite/[redacted]');
    // Other routes keep their ids, which are no credential.
    expect(pathForLog('/console/api/sessions/cs_123')).toBe('/console/api/sessions/cs_123');
    expect(pathForLog('/v1/shares/shr_123')).toBe('/v1/shares/shr_123');
    expect(pathForLog('/console/invite')).toBe('/console/invite');
  });

  it('redacts a credential route quoted in any log text, and leaves prose alone', () => {
    expect(redactSecrets('no route GET /console/api/invitations/abcdefgh/x')).toBe(
      'no route GET /console/api/invitations/[redacted]/x',
    );
    expect(redactSecrets('{"url":"https://gw.example:8443/console/invite/abcdefgh"}')).toBe(
      '{"url":"https://gw.example:8443/console/invite/[redacted]"}',
    );
    expect(redactSecrets('link /s/abcdefgh.')).toBe('link /s/[redacted]');
    expect(redactSecrets('40 req/s/instance')).toBe('40 req/s/instance');
  });
});
