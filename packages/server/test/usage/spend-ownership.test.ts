import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../helpers/gateway.js';
import { finishedRequest } from '../helpers/records.js';
import { listAllPages, succeeded, usageOf } from './spend.js';

interface Caller {
  name: string;
  key: string;
  accountId: string;
  records: string[];
  idempotencyKey: string;
}

/**
 * Who sees what was spent (docs/usage.md, "Who may read what"): keys A1 (personal) and A2
 * (service) of one account and B of another. A record list holds only the calling key's own
 * records — never another key's, of the same account or not, whatever the filters or cursor; the
 * account's usage is the account's, the same for each of its keys; a statement is the operator's
 * alone.
 */
describeEachDialect('who sees what was spent on $name', (dialect) => {
  let gateway: TestGateway;
  let callers: Caller[];
  const today = new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    gateway = await startGateway(dialect);
    const a = await gateway.account(10_000_000);
    const a2 = await gateway.newKey(a.accountId, { kind: 'service' });
    const b = await gateway.account(10_000_000);
    callers = [
      { name: 'A1', key: a.key, accountId: a.accountId, records: [], idempotencyKey: '' },
      { name: 'A2', key: a2.key, accountId: a.accountId, records: [], idempotencyKey: '' },
      { name: 'B', key: b.key, accountId: b.accountId, records: [], idempotencyKey: '' },
    ];
    for (const [index, caller] of callers.entries()) {
      // One record through the API (with a known idempotency key), the rest straight through
      // the request service; each caller a different number, at different prices.
      caller.idempotencyKey = randomUUID();
      const sent = await gateway.call('POST', '/v1/embeddings', {
        key: caller.key,
        body: { model: 'sim-embed', input: `from ${caller.name}` },
        idempotencyKey: caller.idempotencyKey,
      });
      expect(sent.statusCode, sent.body).toBe(200);
      caller.records.push(String(sent.headers['x-service-request-id']));
      for (let count = 0; count <= index + 2; count += 1)
        caller.records.push(
          await finishedRequest(gateway.services, {
            key: caller.key,
            hold: 50,
            outcome: succeeded(10 * (index + 1)),
            model: 'sim-chat',
          }),
        );
    }
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  it('each key lists exactly its own records, with any filter or page size', async () => {
    for (const caller of callers) {
      for (const query of ['', 'limit=1', 'model=sim-chat', 'status=succeeded&limit=2']) {
        const { records } = await listAllPages(gateway, caller.key, query);
        const expected = query === 'model=sim-chat' ? caller.records.slice(1) : caller.records;
        expect(records.map((record) => record.id).sort(), `${caller.name} ${query}`).toEqual(
          [...expected].sort(),
        );
      }
    }
  });

  it("another key's cursor pages only the caller's own records", async () => {
    const [a1, a2, b] = callers;
    if (a1 === undefined || a2 === undefined || b === undefined) throw new Error('no callers');
    const page = await listAllPages(gateway, a1.key, 'limit=1');
    for (const cursor of page.pages.map((each) => each.next_cursor)) {
      if (cursor === null) continue;
      for (const outsider of [a2, b]) {
        const response = await gateway.call('GET', `/v1/requests?cursor=${cursor}`, {
          key: outsider.key,
        });
        expect(response.statusCode).toBe(200);
        const ids = response.json<{ data: { id: string }[] }>().data.map((record) => record.id);
        expect(ids.filter((id) => !outsider.records.includes(id))).toEqual([]);
      }
    }
  });

  it('the idempotency-key lookup answers only the creating key; others get 404', async () => {
    for (const owner of callers) {
      for (const reader of callers) {
        const response = await gateway.call(
          'GET',
          `/v1/requests?idempotency_key=${owner.idempotencyKey}`,
          { key: reader.key },
        );
        expect(response.statusCode, `${reader.name} reads ${owner.name}`).toBe(
          reader === owner ? 200 : 404,
        );
      }
    }
  });

  it("usage is the account's: the same for each of its keys, personal or service", async () => {
    const [a1, a2, b] = callers;
    if (a1 === undefined || a2 === undefined || b === undefined) throw new Error('no callers');
    const range = `from=${today}&to=${today}`;
    const [usageA1, usageA2, usageB] = [
      await usageOf(gateway, a1.key, range),
      await usageOf(gateway, a2.key, range),
      await usageOf(gateway, b.key, range),
    ];
    expect(usageA2).toEqual(usageA1);
    expect(usageA1.account_id).toBe(a1.accountId);
    expect(usageB.account_id).toBe(b.accountId);
    // A1: 1 embedding + 3 chats at 10; A2: 1 embedding + 4 chats at 20; B: 1 + 5 at 30.
    const chatsOf = (usage: typeof usageA1) =>
      usage.data.find((row) => row.model === 'sim-chat' && row.date === today);
    expect(chatsOf(usageA1)).toEqual({ date: today, model: 'sim-chat', requests: 7, amount: 110 });
    expect(chatsOf(usageB)).toEqual({ date: today, model: 'sim-chat', requests: 5, amount: 150 });
    expect(usageA1.totals.requests).toBe(9);
    expect(usageB.totals.requests).toBe(6);
    expect(await usageOf(gateway, a1.key)).toEqual({
      ...usageA1,
      from: new Date(Date.parse(today) - 29 * 86_400_000).toISOString().slice(0, 10),
    });
  });

  it('a statement is the operator’s alone: no token 401, an API key or a wrong token 403', async () => {
    const [a1] = callers;
    if (a1 === undefined) throw new Error('no callers');
    const url = `/admin/v1/accounts/${a1.accountId}/statement`;
    const bare = await gateway.app.inject({ method: 'GET', url });
    expect(bare.statusCode).toBe(401);
    expect(bare.json()).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
    for (const bearer of [a1.key, `${ADMIN_TOKEN}x`]) {
      const refused = await gateway.app.inject({
        method: 'GET',
        url,
        headers: { authorization: `Bearer ${bearer}` },
      });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ error: { code: 'PERMISSION_DENIED' } });
      expect(refused.body).not.toContain('movements');
    }
    // Nor is there a statement under /v1 for any key.
    const throughKey = await gateway.call('GET', `/v1/accounts/${a1.accountId}/statement`, {
      key: a1.key,
    });
    expect(throughKey.statusCode).toBe(404);
    const allowed = await gateway.app.inject({
      method: 'GET',
      url,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(allowed.statusCode).toBe(200);
  });
});
