import { afterEach, expect, it } from 'vitest';
import {
  consoleCall,
  consoleUser,
  CONSOLE_PASSWORD,
  type ConsoleSession,
} from '../helpers/console-session.js';
import { describeEachDialect, type TestDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../helpers/gateway.js';
import { sharedDatabase } from '../helpers/shared-database.js';

/**
 * Taking console access away (docs/console.md, "Taking access away"): a disabled user's
 * sessions end at once on every instance, their invitation links die, sign-in refuses them, and
 * the audit log says who did it. Two gateways on one database, as behind a load balancer.
 */
describeEachDialect('disabling a console user on $name', (dialect: TestDialect) => {
  let gateways: TestGateway[] = [];
  let remove: (() => Promise<void>) | undefined;
  afterEach(async () => {
    for (const gateway of gateways) await gateway.close();
    gateways = [];
    await remove?.();
    remove = undefined;
  });

  async function twoInstances(): Promise<[TestGateway, TestGateway]> {
    const shared = sharedDatabase(dialect);
    remove = shared.remove;
    const first = await startGateway(dialect, { services: shared.services });
    gateways.push(first);
    const second = await startGateway(dialect, { services: shared.services });
    gateways.push(second);
    return [first, second];
  }

  const admin = (gateway: TestGateway, method: 'GET' | 'POST', url: string, body?: unknown) =>
    gateway.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });

  const signIn = (gateway: TestGateway, email: string) =>
    gateway.app.inject({
      method: 'POST',
      url: '/console/api/session',
      payload: { email, password: CONSOLE_PASSWORD },
    });

  /** The session's next request on `gateway`: 200 while it is valid. */
  const sessionStatus = async (gateway: TestGateway, session: ConsoleSession) =>
    (await consoleCall(gateway, session, 'GET', '/console/api/session')).statusCode;

  it('an operator disables a member from the console: the session valid on both instances is refused on both at once, sign-in is refused, the audit row names the operator; enabling lets them sign in again', async () => {
    const [first, second] = await twoInstances();
    const { accountId } = await first.account(0);
    const operator = await consoleUser(first, 'ops@example.test', 'operator');
    const member = await consoleUser(first, 'member@example.test', 'member', accountId);
    expect(await sessionStatus(first, member)).toBe(200);
    expect(await sessionStatus(second, member)).toBe(200);

    const disabled = await consoleCall(
      second,
      operator,
      'POST',
      `/console/api/admin/users/${member.userId}/disable`,
    );
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect(disabled.json()).toMatchObject({ id: member.userId, disabled_at: expect.any(String) });

    expect(await sessionStatus(first, member)).toBe(401);
    expect(await sessionStatus(second, member)).toBe(401);
    const write = await consoleCall(first, member, 'POST', '/console/api/keys', {
      body: { name: 'after' },
    });
    expect(write.statusCode).toBe(401);
    for (const gateway of [first, second]) {
      const refused = await signIn(gateway, 'member@example.test');
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['set-cookie']).toBeUndefined();
    }
    const audit = await admin(first, 'GET', '/admin/v1/audit?action=console_user.disable');
    expect(audit.json()).toMatchObject({
      data: [
        {
          action: 'console_user.disable',
          target_id: member.userId,
          account_id: accountId,
          actor: { kind: 'console_user', id: operator.userId, email: 'ops@example.test' },
          detail: { email: 'member@example.test', role: 'member' },
        },
      ],
    });

    const enabled = await consoleCall(
      first,
      operator,
      'POST',
      `/console/api/admin/users/${member.userId}/enable`,
    );
    expect(enabled.statusCode, enabled.body).toBe(200);
    expect(enabled.json()).toMatchObject({ disabled_at: null });
    // The ended session stays ended; the password opens a new one.
    expect(await sessionStatus(second, member)).toBe(401);
    expect((await signIn(second, 'member@example.test')).statusCode).toBe(200);
    const enabledRows = await admin(first, 'GET', '/admin/v1/audit?action=console_user.enable');
    expect(enabledRows.json()).toMatchObject({ data: [{ target_id: member.userId }] });
  });

  it('the admin API disables a user with a pending invitation: the link dies on every instance, and inviting them again is refused until enabled', async () => {
    const [first, second] = await twoInstances();
    const invitation = await first.services.consoleUsers.invite({
      email: 'pending@example.test',
      role: 'operator',
    });
    const token = invitation.invite_url.split('/').at(-1) ?? '';
    expect(
      (await second.app.inject({ method: 'GET', url: `/console/api/invitations/${token}` }))
        .statusCode,
    ).toBe(200);

    const disabled = await admin(first, 'POST', `/admin/v1/users/${invitation.user.id}/disable`);
    expect(disabled.statusCode, disabled.body).toBe(200);
    for (const gateway of [first, second]) {
      const shown = await gateway.app.inject({
        method: 'GET',
        url: `/console/api/invitations/${token}`,
      });
      expect(shown.statusCode).toBe(404);
      const accepted = await gateway.app.inject({
        method: 'POST',
        url: `/console/api/invitations/${token}`,
        payload: { password: CONSOLE_PASSWORD },
      });
      expect(accepted.statusCode).toBe(404);
    }
    const user = await first.services.consoleUsers.byId(invitation.user.id);
    expect(user.password_hash).toBeNull();
    const reinvited = await admin(first, 'POST', '/admin/v1/invitations', {
      email: 'pending@example.test',
      role: 'operator',
    });
    expect(reinvited.statusCode).toBe(409);
    expect(reinvited.json()).toMatchObject({ error: { param: 'email' } });
    const audit = await admin(first, 'GET', '/admin/v1/audit?action=console_user.disable');
    expect(audit.json()).toMatchObject({
      data: [{ target_id: invitation.user.id, actor: { kind: 'admin_token' } }],
    });
    // Disabling again changes nothing and writes no second row.
    expect(
      (await admin(second, 'POST', `/admin/v1/users/${invitation.user.id}/disable`)).statusCode,
    ).toBe(200);
    const again = await admin(first, 'GET', '/admin/v1/audit?action=console_user.disable');
    expect(again.json<{ data: unknown[] }>().data).toHaveLength(1);
    // An unknown user is 404; a stray body field is 400 naming it.
    expect((await admin(first, 'POST', '/admin/v1/users/cu_nope/disable')).statusCode).toBe(404);
    const stray = await admin(first, 'POST', `/admin/v1/users/${invitation.user.id}/enable`, {
      force: true,
    });
    expect(stray.statusCode).toBe(400);
    expect(stray.json()).toMatchObject({ error: { param: 'body.force' } });
  });

  it('nobody locks the operators out: the last operator who can sign in cannot be disabled, and an operator cannot disable themselves from the console', async () => {
    const [first, second] = await twoInstances();
    const only = await consoleUser(first, 'only@example.test', 'operator');
    // An invited operator without a password yet does not count: they cannot sign in.
    await first.services.consoleUsers.invite({ email: 'later@example.test', role: 'operator' });

    const last = await admin(second, 'POST', `/admin/v1/users/${only.userId}/disable`);
    expect(last.statusCode).toBe(403);
    expect(last.json()).toMatchObject({ error: { code: 'PERMISSION_DENIED', param: 'id' } });
    const self = await consoleCall(
      first,
      only,
      'POST',
      `/console/api/admin/users/${only.userId}/disable`,
    );
    expect(self.statusCode).toBe(403);
    expect(self.json()).toMatchObject({ error: { param: 'id' } });
    expect(await sessionStatus(second, only)).toBe(200);

    // With a second operator, either may disable the other (never both).
    const other = await consoleUser(second, 'other@example.test', 'operator');
    const disabled = await consoleCall(
      second,
      other,
      'POST',
      `/console/api/admin/users/${only.userId}/disable`,
    );
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect(await sessionStatus(first, only)).toBe(401);
    const back = await admin(first, 'POST', `/admin/v1/users/${other.userId}/disable`);
    expect(back.statusCode).toBe(403);
    expect(await sessionStatus(first, other)).toBe(200);

    const listed = await consoleCall(first, other, 'GET', '/console/api/admin/users');
    expect(listed.statusCode).toBe(200);
    expect(
      listed
        .json<{ data: { email: string; disabled_at: string | null }[] }>()
        .data.map((user) => [user.email, user.disabled_at !== null]),
    ).toEqual([
      ['only@example.test', true],
      ['later@example.test', false],
      ['other@example.test', false],
    ]);
  });

  it('a member is 403 on the users routes, before anything is read', async () => {
    const [first] = await twoInstances();
    const { accountId } = await first.account(0);
    const operator = await consoleUser(first, 'ops@example.test', 'operator');
    const member = await consoleUser(first, 'm@example.test', 'member', accountId);
    for (const [method, url] of [
      ['GET', '/console/api/admin/users'],
      ['POST', `/console/api/admin/users/${operator.userId}/disable`],
      ['POST', `/console/api/admin/users/${operator.userId}/enable`],
    ] as const) {
      const refused = await consoleCall(first, member, method, url);
      expect(refused.statusCode, url).toBe(403);
    }
    expect(await sessionStatus(first, operator)).toBe(200);
  });
});
