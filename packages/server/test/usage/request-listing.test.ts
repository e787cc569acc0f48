import { randomUUID } from 'node:crypto';
import type { RequestRecord, RequestSummary } from '@tollgate/protocol';
import { afterEach, expect, it } from 'vitest';
import { ApiError } from '../../src/errors/api-error.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { manualClock, startGateway, type TestGateway } from '../helpers/gateway.js';
import { finishedRequest, unknownOutcome } from '../helpers/records.js';
import { listAllPages, listRequests, succeeded } from './spend.js';

const START = Date.parse('2026-11-10T08:00:00Z');

/**
 * `GET /v1/requests` as a list (docs/requests.md, "Listing"): every record of the calling key
 * exactly once across pages, newest first; filters by model, status and time; the
 * idempotency-key lookup of spec 4.2 unchanged beside it; every bad parameter a 400 naming it.
 */
describeEachDialect('listing the key’s own requests on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function started() {
    const clock = manualClock(START);
    gateway = await startGateway(dialect, { clock });
    const { accountId, key } = await gateway.account(10_000_000);
    return { clock, client: gateway, accountId, key };
  }

  it('pages through every record once, newest first, without duplicates or gaps', async () => {
    const { clock, client, key } = await started();
    const created: string[] = [];
    for (let index = 0; index < 23; index += 1) {
      created.push(
        await finishedRequest(client.services, {
          key,
          hold: 10,
          outcome: succeeded(1 + (index % 5)),
        }),
      );
      // Every third record shares its millisecond with the next: the id breaks the tie.
      if (index % 3 !== 0) clock.advance(1_000);
    }

    const { records, pages } = await listAllPages(client, key, 'limit=5');
    expect(pages.map((page) => page.data.length)).toEqual([5, 5, 5, 5, 3]);
    expect(pages.map((page) => page.has_more)).toEqual([true, true, true, true, false]);
    expect(pages.slice(0, 4).every((page) => typeof page.next_cursor === 'string')).toBe(true);
    expect(pages[4]?.next_cursor).toBeNull();
    const ids = records.map((record) => record.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual([...created].sort());
    const times = records.map((record) => Date.parse(record.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // The last two share a millisecond: either may come first, but they come first.
    expect(ids.slice(0, 2).sort()).toEqual(created.slice(-2).sort());

    const first = await listRequests(client, key);
    expect(first).toMatchObject({ object: 'list', has_more: true });
    expect(first.data).toHaveLength(20);
    const whole = await listRequests(client, key, 'limit=100');
    expect(whole.data.map((record) => record.id)).toEqual(ids);
    expect(whole).toMatchObject({ has_more: false, next_cursor: null });
  });

  it('filters by model, status and time, alone, together and across pages', async () => {
    const { clock, client, key } = await started();
    const make = async (model: string, outcome = succeeded(2)) => {
      const id = await finishedRequest(client.services, { key, hold: 5, outcome, model });
      clock.advance(60_000);
      return id;
    };
    const embeds = [await make('sim-embed'), await make('sim-embed'), await make('sim-embed')];
    const middle = START + 3 * 60_000;
    const chats = [await make('sim-chat'), await make('sim-chat')];
    const failed = await make('sim-embed', {
      kind: 'failed',
      error: new ApiError('UPSTREAM_ERROR', 'boom'),
      upstreamRequestId: null,
    });
    const unknown = await make('sim-chat', unknownOutcome);
    // A request still running: claimed, never finished (its hold stays open).
    const principal = await client.services.keys.authenticate(key);
    const running = client.services.ids.next('req');
    const claim = await client.services.requests.claim(
      {
        requestId: running,
        principal,
        idempotencyKey: randomUUID(),
        fingerprint: 'f',
        method: 'POST',
        path: '/v1/embeddings',
        model: 'sim-embed',
      },
      { amount: 5, priceVersion: 'sim-embed@1' },
    );
    expect(claim.kind).toBe('claimed');

    const ids = async (query: string) =>
      (await listAllPages(client, key, query)).records.map((record) => record.id).sort();
    expect(await ids('model=sim-chat')).toEqual([...chats, unknown].sort());
    expect(await ids('status=failed')).toEqual([failed]);
    expect(await ids('status=submission_unknown')).toEqual([unknown]);
    expect(await ids('status=processing')).toEqual([running]);
    expect(await ids('model=sim-embed&status=succeeded&limit=2')).toEqual([...embeds].sort());
    expect(await ids('model=sim-vision')).toEqual([]);

    const at = new Date(middle).toISOString();
    expect(await ids(`created_before=${at}`)).toEqual([...embeds].sort());
    expect(await ids(`created_after=${at}&limit=1`)).toEqual(
      [...chats, failed, unknown, running].sort(),
    );
    // The same instant with its zone written another way (`+` encoded: a bare one is a space).
    const inShanghai = new Date(middle + 8 * 3_600_000).toISOString().replace('.000Z', '+08:00');
    expect(await ids(`created_before=${encodeURIComponent(inShanghai)}`)).toEqual(
      [...embeds].sort(),
    );
    const twoMinutesLater = new Date(middle + 2 * 60_000).toISOString();
    expect(await ids(`created_after=${at}&created_before=${twoMinutesLater}`)).toEqual(
      [...chats].sort(),
    );
    expect(await ids('created_after=2026-11-11')).toEqual([]);
    expect(await ids('created_after=2026-11-10&model=sim-chat&status=succeeded')).toEqual(
      [...chats].sort(),
    );
  });

  it('lists each record as GET /v1/requests/{id} shows it, without its result', async () => {
    const { client, key } = await started();
    const ok = await client.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'listed' },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    const broken = await client.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'broken [sim:fail=500]' },
    });
    expect(broken.statusCode).toBe(502);
    const listed = await listRequests(client, key);
    expect(listed.data).toHaveLength(2);
    for (const summary of listed.data) {
      const read = await client.call('GET', `/v1/requests/${summary.id}`, { key });
      const { result: _result, ...expected } = read.json<RequestRecord>();
      expect(summary).toEqual(expected satisfies RequestSummary);
      expect(Object.keys(summary)).not.toContain('result');
    }
    const failed = listed.data.find((summary) => summary.status === 'failed');
    expect(failed?.error).toMatchObject({ code: 'UPSTREAM_ERROR' });
    expect(listed.data.find((summary) => summary.status === 'succeeded')?.bill).toMatchObject({
      captured: true,
    });
  });

  it('keeps the idempotency-key lookup (spec 4.2) working, and alone', async () => {
    const { client, key } = await started();
    const idempotencyKey = randomUUID();
    const sent = await client.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input: 'find me' },
      idempotencyKey,
    });
    const requestId = String(sent.headers['x-service-request-id']);
    for (const spelling of [idempotencyKey, idempotencyKey.toUpperCase()]) {
      const found = await client.call('GET', `/v1/requests?idempotency_key=${spelling}`, { key });
      expect(found.statusCode).toBe(200);
      expect(found.json()).toMatchObject({
        object: 'request',
        id: requestId,
        idempotency_key: idempotencyKey,
      });
      expect(found.json<RequestRecord>().result).not.toBeNull();
    }
    const missing = await client.call('GET', `/v1/requests?idempotency_key=${randomUUID()}`, {
      key,
    });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
    const empty = await client.call('GET', '/v1/requests?idempotency_key=', { key });
    expect(empty.statusCode).toBe(400);
    for (const extra of ['limit=5', 'status=succeeded', 'cursor=abc', 'model=sim-embed']) {
      const mixed = await client.call(
        'GET',
        `/v1/requests?idempotency_key=${idempotencyKey}&${extra}`,
        { key },
      );
      expect(mixed.statusCode, extra).toBe(400);
      expect(mixed.json()).toMatchObject({
        error: { code: 'INVALID_INPUT', param: extra.split('=')[0] },
      });
    }
  });

  it('refuses every bad parameter with 400 INVALID_INPUT naming it', async () => {
    const { client, key } = await started();
    const cases: [string, string][] = [
      ['foo=1', 'querystring.foo'],
      ['state=failed', 'querystring.state'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=abc', 'limit'],
      ['cursor=not-a-cursor', 'cursor'],
      [`cursor=${Buffer.from('12.a b').toString('base64url')}`, 'cursor'],
      ['status=done', 'status'],
      ['created_after=2026-02-30', 'created_after'],
      ['created_after=2026-11-01T08:00:00', 'created_after'],
      ['created_before=yesterday', 'created_before'],
      ['created_after=2026-11-02&created_before=2026-11-01', 'created_before'],
      ['model=a&model=b', 'querystring.model'],
    ];
    for (const [query, param] of cases) {
      const response = await client.call('GET', `/v1/requests?${query}`, { key });
      expect(response.statusCode, query).toBe(400);
      expect(response.json(), query).toMatchObject({ error: { code: 'INVALID_INPUT', param } });
    }
    const anonymous = await client.call('GET', '/v1/requests');
    expect(anonymous.statusCode).toBe(401);
  });
});
