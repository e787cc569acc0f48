import { afterEach, expect, it } from 'vitest';
import { consoleCall, consoleUser } from '../helpers/console-session.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../helpers/gateway.js';

interface Statement {
  account_id: string;
  opening_balance: number;
  closing_balance: number;
  movements: { kind: string; amount: number; balance: number; request_id: string | null }[];
}
interface FlaggedRecord {
  id: string;
  account_id: string;
  usage_exceeded_cap: { detail: string; reviewed_at: string | null; review: string | null };
}

/**
 * Risks of the operator pages for statements and usage beyond the cap, and of the keys page's
 * spend per key: a statement from the console that differs from the admin API's (a second money
 * rule), a member reading another account's statement, a review that moves money or can be made
 * twice, spend attributed to the wrong key or leaking across accounts.
 */
describeEachDialect(
  'console statements, usage beyond the cap and spend per key on $name',
  (dialect) => {
    let gateway: TestGateway | undefined;
    afterEach(async () => {
      await gateway?.expectLedgerClean();
      await gateway?.close();
      gateway = undefined;
    });

    const chat = (client: TestGateway, key: string, content: string, maxTokens = 50) =>
      client.call('POST', '/v1/chat/completions', {
        key,
        body: { model: 'sim-chat', max_tokens: maxTokens, messages: [{ role: 'user', content }] },
      });

    it('an operator downloads the statement the admin API answers, as JSON and CSV; a member is 403 whatever the query', async () => {
      const client = (gateway = await startGateway(dialect));
      const { accountId, key } = await client.account(5_000_000);
      expect((await chat(client, key, 'a charge')).statusCode).toBe(200);
      const operator = await consoleUser(client, 'ops@example.test', 'operator');
      const member = await consoleUser(client, 'member@example.test', 'member', accountId);
      const url = `/console/api/admin/accounts/${accountId}/statement`;

      const json = await consoleCall(client, operator, 'GET', url);
      expect(json.statusCode, json.body).toBe(200);
      const statement = json.json<Statement>();
      const { balance } = await client.balance(accountId);
      expect(statement.closing_balance).toBe(balance);
      expect(statement.movements.map((movement) => movement.kind)).toEqual(['topup', 'capture']);
      const admin = await client.app.inject({
        method: 'GET',
        url: `/admin/v1/accounts/${accountId}/statement`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(json.body).toBe(admin.body);

      const csv = await consoleCall(client, operator, 'GET', `${url}?format=csv`);
      expect(csv.statusCode).toBe(200);
      expect(csv.headers['content-type']).toContain('text/csv');
      expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="statement-/);
      const lines = csv.body.trim().split('\r\n');
      expect(lines[0]).toMatch(/^time,kind,amount,balance,/);
      expect(lines.at(-1)).toContain(`,closing,,${balance},`);

      const badFormat = await consoleCall(client, operator, 'GET', `${url}?format=xml`);
      expect(badFormat.statusCode).toBe(400);
      const missing = await consoleCall(
        client,
        operator,
        'GET',
        '/console/api/admin/accounts/acct_missing/statement',
      );
      expect(missing.statusCode).toBe(404);

      for (const query of ['', '?format=csv', '?format=xml']) {
        const refused = await consoleCall(client, member, 'GET', `${url}${query}`);
        expect(refused.statusCode, query).toBe(403);
        expect(refused.json()).toMatchObject({ error: { code: 'PERMISSION_DENIED' } });
      }
    });

    it('an operator lists usage beyond the cap and reviews it once with a reason: audited, no money moves; a member is 403', async () => {
      const client = (gateway = await startGateway(dialect));
      const { accountId, key } = await client.account(10_000_000);
      const flagged = await chat(client, key, 'hi [sim:extra_tokens=100000]', 5);
      const requestId = String(flagged.headers['x-service-request-id']);
      await chat(client, key, 'credible');
      const operator = await consoleUser(client, 'ops@example.test', 'operator');
      const member = await consoleUser(client, 'member@example.test', 'member', accountId);
      const list = '/console/api/admin/requests/usage-beyond-cap';

      const listed = await consoleCall(client, operator, 'GET', list);
      expect(listed.statusCode).toBe(200);
      const rows = listed.json<{ data: FlaggedRecord[] }>().data;
      expect(rows.map((row) => row.id)).toEqual([requestId]);
      expect(rows[0]).toMatchObject({
        account_id: accountId,
        usage_exceeded_cap: {
          reviewed_at: null,
          detail: expect.stringContaining('completion_tokens'),
        },
      });

      const before = await client.balance(accountId);
      const review = `/console/api/admin/requests/${requestId}/review-usage`;
      expect(
        (await consoleCall(client, member, 'POST', review, { body: { reason: 'x' } })).statusCode,
      ).toBe(403);
      const noReason = await consoleCall(client, operator, 'POST', review, { body: {} });
      expect(noReason.statusCode).toBe(400);
      expect(noReason.json()).toMatchObject({ error: { param: 'reason' } });
      expect(
        (await consoleCall(client, operator, 'GET', list)).json<{ data: unknown[] }>().data,
      ).toHaveLength(1);

      const reviewed = await consoleCall(client, operator, 'POST', review, {
        body: { reason: 'upstream bug, the cap is right' },
      });
      expect(reviewed.statusCode, reviewed.body).toBe(200);
      expect(reviewed.json()).toMatchObject({
        usage_exceeded_cap: { review: 'upstream bug, the cap is right' },
      });
      const twice = await consoleCall(client, operator, 'POST', review, {
        body: { reason: 'again' },
      });
      expect(twice.statusCode).toBe(409);
      expect(
        (await consoleCall(client, operator, 'GET', list)).json<{ data: unknown[] }>().data,
      ).toEqual([]);
      expect(await client.balance(accountId)).toEqual(before);

      const audit = await consoleCall(client, operator, 'GET', '/console/api/admin/audit');
      const rowsOfReview = audit
        .json<{ data: { action: string; target_id: string; reason: string }[] }>()
        .data.filter((row) => row.target_id === requestId);
      expect(rowsOfReview).toHaveLength(1);
      expect(rowsOfReview[0]?.reason).toBe('upstream bug, the cap is right');
      expect((await consoleCall(client, member, 'GET', list)).statusCode).toBe(403);
    });

    it('spend per key: each key of the account its own charges, summing to the account’s usage; another account’s keys absent', async () => {
      const client = (gateway = await startGateway(dialect));
      const { accountId, key, keyId } = await client.account(10_000_000);
      const second = await client.newKey(accountId);
      const stranger = await client.account(10_000_000);
      for (const content of ['one', 'two'])
        expect((await chat(client, key, content)).statusCode).toBe(200);
      expect((await chat(client, second.key, 'three')).statusCode).toBe(200);
      expect((await chat(client, stranger.key, 'elsewhere')).statusCode).toBe(200);
      const member = await consoleUser(client, 'member@example.test', 'member', accountId);

      const perKey = await consoleCall(client, member, 'GET', '/console/api/usage/keys');
      expect(perKey.statusCode, perKey.body).toBe(200);
      const data = perKey.json<{
        data: { key_id: string | null; requests: number; amount: number }[];
      }>().data;
      expect(data.map((row) => [row.key_id, row.requests]).sort()).toEqual(
        [
          [keyId, 2],
          [second.keyId, 1],
        ].sort(),
      );
      expect(data.every((row) => row.amount > 0)).toBe(true);
      const usage = (await consoleCall(client, member, 'GET', '/console/api/usage')).json<{
        totals: { amount: number; requests: number };
      }>();
      expect(data.reduce((sum, row) => sum + row.amount, 0)).toBe(usage.totals.amount);
      const { balance } = await client.balance(accountId);
      expect(usage.totals.amount).toBe(10_000_000 - balance);

      const badRange = await consoleCall(
        client,
        member,
        'GET',
        '/console/api/usage/keys?from=yesterday',
      );
      expect(badRange.statusCode).toBe(400);
      expect(badRange.json()).toMatchObject({ error: { param: 'from' } });
    });
  },
);
