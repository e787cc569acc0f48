import { afterEach, expect, it } from 'vitest';
import type { AuditEventView } from '../../src/audit/audit-log.js';
import { createIdGenerator } from '../../src/util/effects.js';
import { consoleCall, consoleUser, type ConsoleSession } from '../helpers/console-session.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/media.js';
import { finishedRequest, unknownOutcome } from '../helpers/records.js';

type AuditPage = { data: AuditEventView[] };

describeEachDialect('console operator pages and the audit log on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function start(options: Parameters<typeof startGateway>[1] = {}) {
    gateway = await startGateway(dialect, options);
    return gateway;
  }

  const auditOf = async (client: TestGateway, query = '') =>
    (await client.admin('GET', `/admin/v1/audit${query}`)) as unknown as AuditPage;

  const journalCount = async (client: TestGateway, accountId: string) =>
    (
      await client.services.store.db
        .selectFrom('journal')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('account_id', '=', accountId)
        .executeTakeFirstOrThrow()
    ).n;

  it('a member is refused (403) on every operator route, whatever it names, and nothing changes', async () => {
    const client = await start();
    const { accountId, keyId } = await client.account(1_000);
    const member = await consoleUser(client, 'member@example.test', 'member', accountId);
    const before = (await auditOf(client)).data.length;
    const calls: [method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown][] = [
      ['GET', '/console/api/admin/accounts'],
      ['GET', `/console/api/admin/accounts/${accountId}`],
      ['GET', '/console/api/admin/accounts/acct_missing'],
      ['POST', `/console/api/admin/accounts/${accountId}/topups`, { amount: 5, reference: 'r' }],
      ['POST', `/console/api/admin/keys/${keyId}/disable`, {}],
      ['POST', '/console/api/admin/redemption-codes', { amount: 5 }],
      ['POST', '/console/api/admin/invitations', { email: 'x@example.test', role: 'operator' }],
      ['GET', '/console/api/admin/shares'],
      ['POST', '/console/api/admin/requests/req_missing/resolve', { action: 'release' }],
      ['GET', '/console/api/admin/audit'],
      ['GET', '/console/api/admin/ledger/check'],
      ['PUT', '/console/api/admin/models/sim-embed/prices', {}],
      ['GET', '/console/api/admin/no-such-page'],
    ];
    for (const [method, url, body] of calls) {
      const response = await consoleCall(client, member, method, url, { body });
      expect(response.statusCode, `${method} ${url}`).toBe(403);
      expect(response.json()).toMatchObject({ error: { code: 'PERMISSION_DENIED' } });
    }
    expect(await client.balance(accountId)).toMatchObject({ balance: 1_000 });
    expect((await auditOf(client)).data.length).toBe(before);
  });

  it('an operator tops up from the console: balance, journal and an audit row naming the operator; without CSRF nothing moves', async () => {
    const client = await start();
    const { accountId } = await client.account(0);
    const operator = await consoleUser(client, 'ops@example.test', 'operator');
    const url = `/console/api/admin/accounts/${accountId}/topups`;
    const forged = await consoleCall(client, operator, 'POST', url, {
      body: { amount: 2_500_000, reference: 'wire-1' },
      csrf: false,
    });
    expect(forged.statusCode).toBe(403);
    expect(await client.balance(accountId)).toMatchObject({ balance: 0 });

    const topped = await consoleCall(client, operator, 'POST', url, {
      body: { amount: 2_500_000, reference: 'wire-1' },
    });
    expect(topped.statusCode, topped.body).toBe(200);
    expect(topped.json()).toMatchObject({ balance: 2_500_000, replayed: false });
    const replay = await consoleCall(client, operator, 'POST', url, {
      body: { amount: 2_500_000, reference: 'wire-1' },
    });
    expect(replay.json()).toMatchObject({ balance: 2_500_000, replayed: true });

    const audit = await consoleCall(client, operator, 'GET', '/console/api/admin/audit');
    const rows = audit.json<AuditPage>().data.filter((row) => row.action === 'account.top_up');
    // The replay moved nothing and wrote nothing: one row for one credit.
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      actor: { kind: 'console_user', id: operator.userId, email: 'ops@example.test' },
      account_id: accountId,
      amount: 2_500_000,
      reason: 'wire-1',
    });
  });

  it('a top-up whose audit row cannot be written is rolled back whole: no credit without its row', async () => {
    const real = createIdGenerator();
    // Once armed, every audit row gets the same id: the second collides and must take its
    // credit with it.
    let collide = false;
    const ids = {
      ...real,
      next: (prefix: string) => (collide && prefix === 'aud' ? 'aud_fixed' : real.next(prefix)),
    };
    const client = await start({ services: { ids } });
    const { accountId } = await client.account(0);
    const operator = await consoleUser(client, 'ops@example.test', 'operator');
    collide = true;
    const url = `/console/api/admin/accounts/${accountId}/topups`;
    const balanceBefore = (await client.balance(accountId)).balance;
    const journalBefore = await journalCount(client, accountId);
    const first = await consoleCall(client, operator, 'POST', url, {
      body: { amount: 700, reference: 'a' },
    });
    expect(first.statusCode, first.body).toBe(200);
    const second = await consoleCall(client, operator, 'POST', url, {
      body: { amount: 300, reference: 'b' },
    });
    expect(second.statusCode).toBe(500);
    expect((await client.balance(accountId)).balance).toBe(balanceBefore + 700);
    expect(await journalCount(client, accountId)).toBe(journalBefore + 1);
    const topups = await client.services.store.db
      .selectFrom('topups')
      .select('reference')
      .where('account_id', '=', accountId)
      .where('reference', '=', 'b')
      .execute();
    expect(topups).toEqual([]);
  });

  it('an operator resolves a submission_unknown record with a capture: money moves once, journalled, audited with the reason', async () => {
    const client = await start();
    const { accountId, key } = await client.account(10_000);
    const requestId = await finishedRequest(client.services, {
      key,
      hold: 1_000,
      outcome: unknownOutcome,
    });
    const operator = await consoleUser(client, 'ops@example.test', 'operator');
    const queue = await consoleCall(
      client,
      operator,
      'GET',
      '/console/api/admin/requests/unresolved',
    );
    expect(queue.json<{ data: { id: string }[] }>().data.map((row) => row.id)).toContain(requestId);
    const adminQueue = await client.admin('GET', '/admin/v1/requests?status=submission_unknown');
    expect(JSON.stringify(adminQueue)).toContain(requestId);
    // The resolution page's totals: the same queue, with the money it holds.
    const totals = await consoleCall(client, operator, 'GET', '/console/api/admin/unresolved');
    expect(totals.json()).toMatchObject({
      total: { count: 1, held: 1_000 },
      requests: { count: 1, held: 1_000, data: [expect.objectContaining({ id: requestId })] },
    });

    const url = `/console/api/admin/requests/${requestId}/resolve`;
    const missingReason = await consoleCall(client, operator, 'POST', url, {
      body: { action: 'capture', amount: 600 },
    });
    expect(missingReason.statusCode).toBe(400);
    expect(missingReason.json()).toMatchObject({ error: { param: 'reason' } });
    const resolved = await consoleCall(client, operator, 'POST', url, {
      body: { action: 'capture', amount: 600, reason: 'upstream invoice shows it ran' },
    });
    expect(resolved.statusCode, resolved.body).toBe(200);
    expect(await client.balance(accountId)).toMatchObject({ balance: 9_400, held: 0 });
    const again = await consoleCall(client, operator, 'POST', url, {
      body: { action: 'release', reason: 'twice' },
    });
    expect(again.statusCode).toBe(409);
    const emptied = await consoleCall(client, operator, 'GET', '/console/api/admin/unresolved');
    expect(emptied.json()).toMatchObject({ total: { count: 0, held: 0 } });

    const rows = (await auditOf(client, `?account_id=${accountId}`)).data;
    const resolutions = rows.filter((row) => row.action.startsWith('request.resolve'));
    expect(resolutions).toEqual([
      expect.objectContaining({
        action: 'request.resolve_capture',
        target_id: requestId,
        amount: 600,
        reason: 'upstream invoice shows it ran',
        actor: expect.objectContaining({ kind: 'console_user', id: operator.userId }),
      }),
    ]);
  });

  it('an operator previews a pending share and approves it; rejecting needs a reason; both audited', async () => {
    const client = await start();
    const { accountId, key } = await client.account(0);
    const operator = await consoleUser(client, 'ops@example.test', 'operator');
    const shareOf = async (width: number) => {
      const uploaded = await client.upload(key, png(width, 8), 'image/png');
      const assetId = uploaded.json<{ data: { id: string } }>().data.id;
      const asked = await client.call('POST', '/v1/shares', { key, body: { asset_id: assetId } });
      expect(asked.statusCode, asked.body).toBe(202);
      return asked.json<{ id: string }>().id;
    };
    const first = await shareOf(16);
    const second = await shareOf(17);
    const queue = await consoleCall(
      client,
      operator,
      'GET',
      '/console/api/admin/shares?state=pending_review',
    );
    expect(queue.json<{ data: { id: string }[] }>().data.map((share) => share.id)).toEqual(
      expect.arrayContaining([first, second]),
    );
    const preview = await consoleCall(
      client,
      operator,
      'GET',
      `/console/api/admin/shares/${first}/content`,
    );
    expect(preview.statusCode).toBe(200);
    expect(preview.headers['content-type']).toBe('image/png');

    const approved = await consoleCall(
      client,
      operator,
      'POST',
      `/console/api/admin/shares/${first}/approve`,
      {
        body: {},
      },
    );
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({ state: 'approved' });
    const noReason = await consoleCall(
      client,
      operator,
      'POST',
      `/console/api/admin/shares/${second}/reject`,
      {
        body: {},
      },
    );
    expect(noReason.statusCode).toBe(400);
    expect(noReason.json()).toMatchObject({ error: { param: 'reason' } });
    const rejected = await consoleCall(
      client,
      operator,
      'POST',
      `/console/api/admin/shares/${second}/reject`,
      {
        body: { reason: 'shows a face' },
      },
    );
    expect(rejected.json()).toMatchObject({ state: 'rejected' });
    const actions = (await auditOf(client, `?account_id=${accountId}`)).data.map((row) => [
      row.action,
      row.target_id,
      row.reason,
    ]);
    expect(actions).toEqual(
      expect.arrayContaining([
        ['share.approve', first, null],
        ['share.reject', second, 'shows a face'],
      ]),
    );
    expect(actions.filter(([action]) => String(action).startsWith('share.'))).toHaveLength(2);
  });

  it('the admin API audits its actions as the admin token; invitations from it and the console give a one-time link and no secret in the log', async () => {
    const client = await start();
    const { accountId } = await client.account(0);
    await client.admin('POST', `/admin/v1/accounts/${accountId}/topups`, {
      amount: 42,
      reference: 'cash',
    });
    const code = await client.admin('POST', '/admin/v1/redemption-codes', { amount: 9 });
    const invited = await client.app.inject({
      method: 'POST',
      url: '/admin/v1/invitations',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { email: 'new@example.test', role: 'member', account_id: accountId },
    });
    expect(invited.statusCode, invited.body).toBe(201);
    const link = invited.json<{ invite_url: string }>().invite_url;
    expect(link).toMatch(/^\/console\/invite\/.+/);
    const badRole = await client.app.inject({
      method: 'POST',
      url: '/admin/v1/invitations',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { email: 'x@example.test', role: 'root' },
    });
    expect(badRole.statusCode).toBe(400);
    expect(badRole.json()).toMatchObject({ error: { param: 'role' } });

    const operator: ConsoleSession = await consoleUser(client, 'ops@example.test', 'operator');
    const fromConsole = await consoleCall(
      client,
      operator,
      'POST',
      '/console/api/admin/invitations',
      {
        body: { email: 'second@example.test', role: 'operator' },
      },
    );
    expect(fromConsole.statusCode, fromConsole.body).toBe(201);

    const page = await auditOf(client);
    const text = JSON.stringify(page);
    expect(text).not.toContain(link.split('/').at(-1));
    expect(text).not.toContain(String(code['code']));
    expect(
      page.data.find((row) => row.action === 'account.top_up' && row.account_id === accountId),
    ).toMatchObject({
      actor: { kind: 'admin_token', id: null },
      amount: 42,
    });
    expect(page.data.find((row) => row.action === 'redemption_code.create')).toMatchObject({
      target_id: code['id'],
      amount: 9,
    });
    const invitations = page.data.filter((row) => row.action === 'console_user.invite');
    expect(invitations.map((row) => row.actor.kind).sort()).toEqual([
      'admin_token',
      'console_user',
    ]);
    const byAction = await auditOf(client, '?action=console_user.invite&limit=1');
    expect(byAction.data).toHaveLength(1);
    const badFilter = await client.app.inject({
      method: 'GET',
      url: '/admin/v1/audit?who=me',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(badFilter.statusCode).toBe(400);
  });

  it('an operator creates a batch of codes as CSV from the console: each redeems once, the batch is one audit row', async () => {
    const client = await start();
    const { accountId } = await client.account(0);
    const operator = await consoleUser(client, 'ops@example.test', 'operator');
    const url = '/console/api/admin/redemption-codes/batches';
    const tooMany = await consoleCall(client, operator, 'POST', url, {
      body: { amount: 100, count: 1_001 },
    });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json()).toMatchObject({ error: { param: 'count' } });
    const csv = await client.app.inject({
      method: 'POST',
      url,
      headers: { cookie: operator.cookie, 'x-csrf-token': operator.csrf, accept: 'text/csv' },
      payload: { amount: 250_000, count: 3 },
    });
    expect(csv.statusCode, csv.body).toBe(201);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="redemption-codes-/);
    const [header, ...rows] = csv.body.trim().split('\r\n');
    expect(header).toBe('id,code,amount,expires_at');
    const codes = rows.map((row) => row.split(',')[1] ?? '');
    expect(new Set(codes).size).toBe(3);
    for (const code of codes)
      await client.admin('POST', `/admin/v1/accounts/${accountId}/redemptions`, { code });
    expect((await client.balance(accountId)).balance).toBe(750_000);
    const again = await client.app.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${accountId}/redemptions`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { code: codes[0] },
    });
    expect(again.statusCode).toBe(404);
    expect((await client.balance(accountId)).balance).toBe(750_000);
    const batches = (await auditOf(client, '?action=redemption_code.create_batch')).data;
    expect(batches).toEqual([
      expect.objectContaining({
        amount: 750_000,
        detail: expect.objectContaining({ count: 3, each: 250_000 }),
        actor: expect.objectContaining({ id: operator.userId }),
      }),
    ]);
    expect(JSON.stringify(batches)).not.toContain(codes[0]);
    const json = await client.admin('POST', '/admin/v1/redemption-codes/batches', {
      amount: 1,
      count: 2,
      expires_at: new Date(Date.now() + 60_000).toISOString(),
    });
    expect((json['data'] as unknown[]).length).toBe(2);
  });

  it('an operator edits prices from the console: a new price version, the history grows, one audit row; bad prices change nothing', async () => {
    const client = await start();
    const operator = await consoleUser(client, 'ops@example.test', 'operator');
    const models = await consoleCall(client, operator, 'GET', '/console/api/admin/models');
    const embed = models
      .json<{ data: { id: string; current: { price_version: string } }[] }>()
      .data.find((model) => model.id === 'sim-embed');
    expect(embed?.current.price_version).toBe('sim-embed@1');
    const url = '/console/api/admin/models/sim-embed/prices';
    const bad = await consoleCall(client, operator, 'PUT', url, {
      body: { input_per_million_tokens: -1 },
    });
    expect(bad.statusCode).toBe(400);
    const set = await consoleCall(client, operator, 'PUT', url, {
      body: { input_per_million_tokens: 700_000 },
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ price_version: 'sim-embed@2' });
    const history = await consoleCall(client, operator, 'GET', url);
    expect(
      history
        .json<{ data: { price_version: string }[] }>()
        .data.map((entry) => entry.price_version),
    ).toEqual(['sim-embed@2', 'sim-embed@1']);
    const rows = (await auditOf(client, '?action=prices.set')).data;
    expect(rows).toEqual([
      expect.objectContaining({
        target_id: 'sim-embed',
        detail: { price_version: 'sim-embed@2' },
        actor: expect.objectContaining({ id: operator.userId }),
      }),
    ]);
  });
});
