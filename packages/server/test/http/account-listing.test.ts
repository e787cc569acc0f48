import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, manualClock, startGateway, type TestGateway } from '../helpers/gateway.js';

interface Page {
  object: string;
  data: { id: string; email: string; object: string }[];
  has_more: boolean;
  next_cursor: string | null;
}

/**
 * The risk: an operator who has an email (a support ticket) cannot find the account — the admin
 * API listed no accounts at all. `GET /admin/v1/accounts` finds them by part of the email in any
 * case and by id prefix, pages with `limit`/`after` like the other lists, and refuses an unknown
 * parameter (a typo would otherwise return every account as if it had matched).
 */
describeEachDialect('GET /admin/v1/accounts on $name', (dialect) => {
  let gateway: TestGateway;
  const ids: Record<string, string> = {};

  const list = async (query: string) => {
    const response = await gateway.app.inject({
      method: 'GET',
      url: `/admin/v1/accounts${query}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    return response;
  };
  const page = async (query: string) => {
    const response = await list(query);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<Page>();
  };

  beforeAll(async () => {
    // Accounts made in one millisecond tie on created_at and then order by their random id part:
    // a clock that moves a second per account makes "newest first" one answer (a CI run failed on it).
    const clock = manualClock(Date.now());
    gateway = await startGateway(dialect, { clock });
    for (const email of [
      'alice@example.test',
      'bob@example.test',
      'Carol.Jones@Shop.example',
      'under_score@example.test',
      'underxscore@example.test',
    ]) {
      const account = await gateway.admin('POST', '/admin/v1/accounts', { email });
      ids[email.toLowerCase()] = String(account['id']);
      clock.advance(1000);
    }
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('lists every account, newest first, as a paged list object', async () => {
    const all = await page('');
    expect(all.object).toBe('list');
    expect(all.data.map((account) => account.email)).toEqual([
      'underxscore@example.test',
      'under_score@example.test',
      'carol.jones@shop.example',
      'bob@example.test',
      'alice@example.test',
    ]);
    expect(all.data[0]?.object).toBe('account');
    expect(all).toMatchObject({ has_more: false, next_cursor: null });
  });

  it('q matches part of the email, whatever its case; LIKE wildcards match themselves', async () => {
    expect((await page('?q=JONES%40shop')).data.map((account) => account.email)).toEqual([
      'carol.jones@shop.example',
    ]);
    expect((await page('?q=under_')).data.map((account) => account.email)).toEqual([
      'under_score@example.test',
    ]);
    expect((await page('?q=nobody')).data).toEqual([]);
  });

  it('id_prefix matches the start of the id, exactly', async () => {
    const id = ids['bob@example.test'] ?? '';
    expect((await page(`?id_prefix=${id.slice(0, id.length - 2)}`)).data.map((a) => a.id)).toEqual([
      id,
    ]);
    expect((await page(`?id_prefix=${id.slice(0, 5).toUpperCase()}`)).data).toEqual([]);
  });

  it('pages with limit and after, every account once', async () => {
    const first = await page('?limit=2');
    expect(first.data).toHaveLength(2);
    expect(first.has_more).toBe(true);
    expect(first.next_cursor).toBe(first.data[1]?.id);
    const second = await page(`?limit=2&after=${first.next_cursor ?? ''}`);
    const third = await page(`?limit=2&after=${second.next_cursor ?? ''}`);
    expect(third).toMatchObject({ has_more: false, next_cursor: null });
    const seen = [...first.data, ...second.data, ...third.data].map((account) => account.id);
    expect(new Set(seen).size).toBe(5);
  });

  it('refuses an unknown parameter, a bad limit and a foreign cursor, naming each', async () => {
    for (const [query, param] of [
      ['?email=alice', 'querystring.email'],
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?after=acct_nope', 'after'],
      ['?q=', 'q'],
    ] as const) {
      const response = await list(query);
      expect(response.statusCode, query).toBe(400);
      expect(response.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param } });
    }
  });

  it('needs the admin token', async () => {
    const response = await gateway.app.inject({ method: 'GET', url: '/admin/v1/accounts' });
    expect(response.statusCode).toBe(401);
  });
});
