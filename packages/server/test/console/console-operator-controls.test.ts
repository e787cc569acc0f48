import { afterEach, expect, it } from 'vitest';
import type { AuditEventView } from '../../src/audit/audit-log.js';
import { consoleCall, consoleUser } from '../helpers/console-session.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

type AuditPage = { data: AuditEventView[] };
type Channel = { id: string; disabled: boolean; breaker: string };

/**
 * The operator pages for channels, budgets and IP allowlists (docs/console.md): the same
 * `OperatorActions` the admin API calls, behind the session, its CSRF token and the operator role.
 */
describeEachDialect(
  'console operator controls (channels, budgets, allowlists) on $name',
  (dialect) => {
    let gateway: TestGateway | undefined;
    afterEach(async () => {
      await gateway?.expectLedgerClean();
      await gateway?.close();
      gateway = undefined;
    });

    const auditOf = async (client: TestGateway, action: string) =>
      ((await client.admin('GET', `/admin/v1/audit?action=${action}`)) as unknown as AuditPage)
        .data;

    it('a member is refused (403) on the channel, budget and allowlist routes, and nothing changes', async () => {
      gateway = await startGateway(dialect);
      const { accountId, keyId } = await gateway.account(1_000);
      const member = await consoleUser(gateway, 'member@example.test', 'member', accountId);
      const calls: [
        method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
        url: string,
        body?: unknown,
      ][] = [
        ['GET', '/console/api/admin/channels'],
        ['POST', '/console/api/admin/channels/sim-embed/disable', { reason: 'x' }],
        ['POST', '/console/api/admin/channels/sim-embed/enable', {}],
        ['PUT', `/console/api/admin/accounts/${accountId}/budget`, { limit: 1, window: 'daily' }],
        ['DELETE', `/console/api/admin/accounts/${accountId}/budget`],
        ['PUT', `/console/api/admin/keys/${keyId}/budget`, { limit: 1, window: 'daily' }],
        ['DELETE', `/console/api/admin/keys/${keyId}/budget`],
        ['PATCH', `/console/api/admin/keys/${keyId}`, { allowed_ips: ['10.0.0.0/8'] }],
      ];
      for (const [method, url, body] of calls) {
        const response = await consoleCall(gateway, member, method, url, { body });
        expect(response.statusCode, `${method} ${url}`).toBe(403);
        expect(response.json()).toMatchObject({ error: { code: 'PERMISSION_DENIED' } });
      }
      expect(await gateway.admin('GET', `/admin/v1/accounts/${accountId}`)).toMatchObject({
        budget: null,
      });
      const channels = (await gateway.admin('GET', '/admin/v1/channels'))['data'] as Channel[];
      expect(channels.every((channel) => !channel.disabled)).toBe(true);
    });

    it('an operator disables and enables a channel with a reason: state, audit rows naming the operator; without CSRF nothing changes', async () => {
      gateway = await startGateway(dialect);
      const operator = await consoleUser(gateway, 'ops@example.test', 'operator');
      const listed = await consoleCall(gateway, operator, 'GET', '/console/api/admin/channels');
      expect(listed.statusCode, listed.body).toBe(200);
      const channel = listed.json<{ data: Channel[] }>().data[0];
      expect(channel).toMatchObject({ disabled: false, breaker: 'closed' });
      const url = `/console/api/admin/channels/${channel?.id}`;

      const forged = await consoleCall(gateway, operator, 'POST', `${url}/disable`, {
        body: { reason: 'forged' },
        csrf: false,
      });
      expect(forged.statusCode).toBe(403);
      const tooLong = await consoleCall(gateway, operator, 'POST', `${url}/disable`, {
        body: { reason: 'x'.repeat(501) },
      });
      expect(tooLong.statusCode).toBe(400);
      expect(tooLong.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'reason' } });
      const missing = await consoleCall(
        gateway,
        operator,
        'POST',
        '/console/api/admin/channels/nope/disable',
        {
          body: {},
        },
      );
      expect(missing.statusCode).toBe(404);
      expect(await auditOf(gateway, 'channel.disable')).toHaveLength(0);

      const disabled = await consoleCall(gateway, operator, 'POST', `${url}/disable`, {
        body: { reason: 'upstream maintenance' },
      });
      expect(disabled.statusCode, disabled.body).toBe(200);
      expect(disabled.json()).toMatchObject({ id: channel?.id, disabled: true });
      const adminView = (await gateway.admin('GET', '/admin/v1/channels'))['data'] as Channel[];
      expect(adminView.find((each) => each.id === channel?.id)).toMatchObject({ disabled: true });
      expect(await auditOf(gateway, 'channel.disable')).toEqual([
        expect.objectContaining({
          actor: expect.objectContaining({ kind: 'console_user', email: 'ops@example.test' }),
          target_id: channel?.id,
          reason: 'upstream maintenance',
        }),
      ]);

      const enabled = await consoleCall(gateway, operator, 'POST', `${url}/enable`, { body: {} });
      expect(enabled.json()).toMatchObject({ disabled: false });
      expect(await auditOf(gateway, 'channel.enable')).toHaveLength(1);
    });

    it('an account budget set from the console shows on the admin account; removing it clears it; both audited', async () => {
      gateway = await startGateway(dialect);
      const { accountId } = await gateway.account(1_000);
      const operator = await consoleUser(gateway, 'ops@example.test', 'operator');
      const url = `/console/api/admin/accounts/${accountId}/budget`;

      const forged = await consoleCall(gateway, operator, 'PUT', url, {
        body: { limit: 12_500_000, window: 'daily' },
        csrf: false,
      });
      expect(forged.statusCode).toBe(403);
      const fractional = await consoleCall(gateway, operator, 'PUT', url, {
        body: { limit: 12.5, window: 'daily' },
      });
      expect(fractional.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'limit' } });
      expect(await gateway.admin('GET', `/admin/v1/accounts/${accountId}`)).toMatchObject({
        budget: null,
      });

      const set = await consoleCall(gateway, operator, 'PUT', url, {
        body: { limit: 12_500_000, window: 'weekly' },
      });
      expect(set.statusCode, set.body).toBe(200);
      expect(await gateway.admin('GET', `/admin/v1/accounts/${accountId}`)).toMatchObject({
        budget: { limit: 12_500_000, window: 'weekly', spent: 0, remaining: 12_500_000 },
      });
      expect(await auditOf(gateway, 'account.set_budget')).toEqual([
        expect.objectContaining({
          actor: expect.objectContaining({ kind: 'console_user', email: 'ops@example.test' }),
          account_id: accountId,
          target_id: accountId,
        }),
      ]);

      const removed = await consoleCall(gateway, operator, 'DELETE', url);
      expect(removed.statusCode, removed.body).toBe(200);
      expect(await gateway.admin('GET', `/admin/v1/accounts/${accountId}`)).toMatchObject({
        budget: null,
      });
      expect(await auditOf(gateway, 'account.remove_budget')).toHaveLength(1);
    });

    it("a key's budget and allowed IPs set and cleared from the console show on the admin key list, audited", async () => {
      gateway = await startGateway(dialect);
      const { accountId, keyId } = await gateway.account(1_000);
      const operator = await consoleUser(gateway, 'ops@example.test', 'operator');
      const keyOf = async () =>
        (
          (await gateway?.admin('GET', `/admin/v1/accounts/${accountId}/keys`))?.['data'] as {
            id: string;
            budget: unknown;
            allowed_ips: unknown;
          }[]
        ).find((key) => key.id === keyId);

      const budget = await consoleCall(
        gateway,
        operator,
        'PUT',
        `/console/api/admin/keys/${keyId}/budget`,
        {
          body: { limit: 3_000_000, window: 'monthly' },
        },
      );
      expect(budget.statusCode, budget.body).toBe(200);
      const badIps = await consoleCall(
        gateway,
        operator,
        'PATCH',
        `/console/api/admin/keys/${keyId}`,
        {
          body: { allowed_ips: ['not-an-address'] },
        },
      );
      expect(badIps.json()).toMatchObject({
        error: { code: 'INVALID_INPUT', param: 'allowed_ips' },
      });
      const ips = await consoleCall(
        gateway,
        operator,
        'PATCH',
        `/console/api/admin/keys/${keyId}`,
        {
          body: { allowed_ips: ['203.0.113.7', '10.0.0.0/8'] },
        },
      );
      expect(ips.statusCode, ips.body).toBe(200);
      expect(await keyOf()).toMatchObject({
        budget: { limit: 3_000_000, window: 'monthly' },
        allowed_ips: ['203.0.113.7/32', '10.0.0.0/8'],
      });
      expect(await auditOf(gateway, 'key.set_allowed_ips')).toEqual([
        expect.objectContaining({ target_id: keyId, account_id: accountId }),
      ]);
      expect(await auditOf(gateway, 'key.set_budget')).toHaveLength(1);

      await consoleCall(gateway, operator, 'DELETE', `/console/api/admin/keys/${keyId}/budget`);
      await consoleCall(gateway, operator, 'PATCH', `/console/api/admin/keys/${keyId}`, {
        body: { allowed_ips: null },
      });
      expect(await keyOf()).toMatchObject({ budget: null, allowed_ips: null });
      expect(await auditOf(gateway, 'key.remove_budget')).toHaveLength(1);
      expect(await auditOf(gateway, 'key.set_allowed_ips')).toHaveLength(2);
    });

    it('the admin API audits the same actions, naming the admin token', async () => {
      gateway = await startGateway(dialect);
      const { accountId } = await gateway.account(1_000);
      await gateway.admin('PUT', `/admin/v1/accounts/${accountId}/budget`, {
        limit: 5_000_000,
        window: 'daily',
      });
      const channels = (await gateway.admin('GET', '/admin/v1/channels'))['data'] as Channel[];
      await gateway.admin('POST', `/admin/v1/channels/${channels[0]?.id}/disable`, { reason: 'r' });
      await gateway.admin('POST', `/admin/v1/channels/${channels[0]?.id}/enable`);
      for (const action of ['account.set_budget', 'channel.disable', 'channel.enable'])
        expect(await auditOf(gateway, action), action).toEqual([
          expect.objectContaining({ actor: expect.objectContaining({ kind: 'admin_token' }) }),
        ]);
    });
  },
);
