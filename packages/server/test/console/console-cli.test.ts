import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { parseConfig } from '../../src/config/load.js';
import { buildApp } from '../../src/http/app.js';
import { createServices } from '../../src/services.js';
import { cliIn } from '../helpers/processes.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'tollgate-console-cli-'));

const cli = (...args: string[]) => cliIn(dataDir, ...args);

/** The gateway on the CLI's database, for following the printed link. */
async function gatewayOnCliDatabase() {
  const services = await createServices({
    config: parseConfig(defaultConfig, 'test'),
    databaseUrl: `sqlite:${path.join(dataDir, 'tollgate.sqlite')}`,
    assetsDir: path.join(dataDir, 'assets'),
    upstreams: false,
  });
  const app = await buildApp(services);
  return {
    app,
    services,
    close: async () => {
      await app.close();
      await services.close();
    },
  };
}

describe('tollgate users invite', () => {
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('prints a one-time invite_url for the first operator, which sets a password that signs in', async () => {
    const invited = await cli('users', 'invite', 'Boss@Example.test', '--role', 'operator');
    expect(invited.code).toBe(0);
    expect(invited.json).toMatchObject({
      object: 'console_invitation',
      user: { email: 'boss@example.test', role: 'operator', account_id: null },
    });
    // The full link, as the console's invite page shows it: here the gateway's own address.
    const url = String(invited.json['invite_url']);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:8080\/console\/invite\/[0-9A-Za-z]{32}$/);
    const gateway = await gatewayOnCliDatabase();
    try {
      const token = url.split('/').at(-1) ?? '';
      const accepted = await gateway.app.inject({
        method: 'POST',
        url: `/console/api/invitations/${token}`,
        payload: { password: 'operator password 1' },
      });
      expect(accepted.statusCode).toBe(200);
      const signedIn = await gateway.app.inject({
        method: 'POST',
        url: '/console/api/session',
        payload: { email: 'boss@example.test', password: 'operator password 1' },
      });
      expect(signedIn.statusCode).toBe(200);
      expect(signedIn.json()).toMatchObject({ user: { role: 'operator' } });
    } finally {
      await gateway.close();
    }
  });

  it('prints the link on the address given with --origin (behind a proxy), and refuses one that is not an http(s) origin', async () => {
    const invited = await cli(
      'users',
      'invite',
      'proxied@example.test',
      '--role',
      'operator',
      '--origin',
      'https://gateway.example.test/',
    );
    expect(invited.code).toBe(0);
    expect(String(invited.json['invite_url'])).toMatch(
      /^https:\/\/gateway\.example\.test\/console\/invite\/[0-9A-Za-z]{32}$/,
    );
    const bad = await cli(
      'users',
      'invite',
      'proxied@example.test',
      '--role',
      'operator',
      '--origin',
      'gateway.example.test',
    );
    expect(bad.code).toBe(1);
    expect(bad.json).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'origin' } });
  });

  it('invites a member of an account; a member without --account, or of an unknown one, is refused', async () => {
    const account = await cli('accounts', 'create', '--email', 'owner@example.test');
    const accountId = String(account.json['id']);
    const member = await cli(
      'users',
      'invite',
      'm@example.test',
      '--role',
      'member',
      '--account',
      accountId,
    );
    expect(member.code).toBe(0);
    expect(member.json).toMatchObject({ user: { role: 'member', account_id: accountId } });
    const without = await cli('users', 'invite', 'n@example.test', '--role', 'member');
    expect(without.code).toBe(1);
    expect(without.json).toMatchObject({ error: { code: 'INVALID_INPUT' } });
    const unknown = await cli(
      'users',
      'invite',
      'n@example.test',
      '--role',
      'member',
      '--account',
      'acct_nope',
    );
    expect(unknown.code).toBe(1);
    const badRole = await cli('users', 'invite', 'n@example.test', '--role', 'admin');
    expect(badRole.code).toBe(1);
    expect(String((badRole.json['error'] as { message: string }).message)).toContain('role');
  });

  it("users reset-totp clears a lost second factor and ends the user's sessions: the password alone signs in again; an unknown email exits 1", async () => {
    const invited = await cli('users', 'invite', 'lost-phone@example.test', '--role', 'operator');
    const token = String(invited.json['invite_url']).split('/').at(-1) ?? '';
    const password = 'operator password 2';
    const gateway = await gatewayOnCliDatabase();
    let cookie = '';
    try {
      await gateway.app.inject({
        method: 'POST',
        url: `/console/api/invitations/${token}`,
        payload: { password },
      });
      const signedIn = await gateway.app.inject({
        method: 'POST',
        url: '/console/api/session',
        payload: { email: 'lost-phone@example.test', password },
      });
      cookie = String(signedIn.headers['set-cookie']).split(';')[0] ?? '';
      const headers = {
        cookie,
        'x-csrf-token': signedIn.json<{ csrf_token: string }>().csrf_token,
      };
      const setup = await gateway.app.inject({ method: 'POST', url: '/console/api/totp', headers });
      const secret = setup.json<{ secret: string }>().secret;
      const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate();
      const enabled = await gateway.app.inject({
        method: 'POST',
        url: '/console/api/totp/enable',
        headers,
        payload: { code },
      });
      expect(enabled.statusCode).toBe(204);
    } finally {
      await gateway.close();
    }

    const reset = await cli('users', 'reset-totp', 'Lost-Phone@example.test');
    expect(reset.code).toBe(0);
    expect(reset.json).toMatchObject({ email: 'lost-phone@example.test', totp_enabled: false });
    const after = await gatewayOnCliDatabase();
    try {
      const old = await after.app.inject({
        method: 'GET',
        url: '/console/api/session',
        headers: { cookie },
      });
      expect(old.statusCode).toBe(401);
      const plain = await after.app.inject({
        method: 'POST',
        url: '/console/api/session',
        payload: { email: 'lost-phone@example.test', password },
      });
      expect(plain.statusCode).toBe(200);
    } finally {
      await after.close();
    }
    const unknown = await cli('users', 'reset-totp', 'nobody@example.test');
    expect(unknown.code).toBe(1);
    expect(unknown.json).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });

  it('users disable ends every session of the user and refuses sign-in, audited as the CLI; the last operator only with --force; users enable lets them in again', async () => {
    const invited = await cli('users', 'invite', 'Cut-Off@example.test', '--role', 'operator');
    const token = String(invited.json['invite_url']).split('/').at(-1) ?? '';
    const password = 'operator password 3';
    const signIn = (gateway: Awaited<ReturnType<typeof gatewayOnCliDatabase>>) =>
      gateway.app.inject({
        method: 'POST',
        url: '/console/api/session',
        payload: { email: 'cut-off@example.test', password },
      });
    const gateway = await gatewayOnCliDatabase();
    let cookie = '';
    try {
      await gateway.app.inject({
        method: 'POST',
        url: `/console/api/invitations/${token}`,
        payload: { password },
      });
      const signedIn = await signIn(gateway);
      expect(signedIn.statusCode).toBe(200);
      cookie = String(signedIn.headers['set-cookie']).split(';')[0] ?? '';
      // Every other operator of this file is disabled, so this one is the last who can sign in.
      for (const other of ['boss@example.test', 'lost-phone@example.test'])
        expect((await cli('users', 'disable', other, '--force')).code).toBe(0);
    } finally {
      await gateway.close();
    }

    const refused = await cli('users', 'disable', 'cut-off@example.test');
    expect(refused.code).toBe(1);
    expect(refused.json).toMatchObject({ error: { code: 'PERMISSION_DENIED' } });
    const disabled = await cli('users', 'disable', 'CUT-OFF@example.test', '--force');
    expect(disabled.code).toBe(0);
    expect(disabled.json).toMatchObject({
      email: 'cut-off@example.test',
      disabled_at: expect.any(String),
    });
    const after = await gatewayOnCliDatabase();
    try {
      const old = await after.app.inject({
        method: 'GET',
        url: '/console/api/session',
        headers: { cookie },
      });
      expect(old.statusCode).toBe(401);
      expect((await signIn(after)).statusCode).toBe(401);
      const [row] = await after.services.store.db
        .selectFrom('audit_events')
        .selectAll()
        .where('action', '=', 'console_user.disable')
        .where('target_id', '=', String((disabled.json as { id: string }).id))
        .execute();
      expect(row).toMatchObject({ actor_kind: 'cli', actor_id: userInfo().username });
    } finally {
      await after.close();
    }

    expect((await cli('users', 'enable', 'cut-off@example.test')).code).toBe(0);
    const enabled = await gatewayOnCliDatabase();
    try {
      expect((await signIn(enabled)).statusCode).toBe(200);
    } finally {
      await enabled.close();
    }
    const unknown = await cli('users', 'disable', 'nobody@example.test');
    expect(unknown.code).toBe(1);
    expect(unknown.json).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });
});
