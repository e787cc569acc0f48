import { randomUUID } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import {
  oneMicroYuanEmbeddingsConfig,
  startGateway,
  type TestGateway,
} from '../helpers/gateway.js';
import { consoleCall, signedInMember } from './console-member.js';

interface OwnerSummary {
  id: string;
  key_id: string;
  idempotency_key: string;
  bill: { amount: number; pricing_rule: string; price_version: string } | null;
}

async function embed(gateway: TestGateway, key: string, idempotencyKey = randomUUID()) {
  const answer = await gateway.call('POST', '/v1/embeddings', {
    key,
    body: { model: 'sim-embed', input: 'hello' },
    idempotencyKey,
  });
  expect(answer.statusCode, answer.body).toBe(200);
  return String(answer.headers['x-service-request-id']);
}

describeEachDialect('console requests on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  it('the owner finds a record by id or by idempotency key across its keys, never another account’s', async () => {
    gateway = await startGateway(dialect, { config: oneMicroYuanEmbeddingsConfig() });
    const member = await signedInMember(gateway, 1_000);
    const second = await gateway.newKey(member.accountId);
    const shared = randomUUID();
    const first = await embed(gateway, member.key, shared);
    const other = await embed(gateway, second.key, shared);
    await embed(gateway, member.key);
    const stranger = await gateway.account(1_000);
    const strangers = await embed(gateway, stranger.key, shared);

    const byKey = await consoleCall(
      gateway,
      'GET',
      `/console/api/requests?idempotency_key=${shared.toUpperCase()}`,
      { signed: member.signed },
    );
    expect(byKey.statusCode).toBe(200);
    expect(
      byKey
        .json<{ data: OwnerSummary[] }>()
        .data.map((row) => row.id)
        .sort(),
    ).toEqual([first, other].sort());

    const byId = await consoleCall(gateway, 'GET', `/console/api/requests?request_id=${first}`, {
      signed: member.signed,
    });
    expect(byId.json<{ data: OwnerSummary[] }>().data.map((row) => row.id)).toEqual([first]);
    const detail = await consoleCall(gateway, 'GET', `/console/api/requests/${first}`, {
      signed: member.signed,
    });
    expect(detail.statusCode).toBe(200);
    expect(detail.json<OwnerSummary>()).toMatchObject({
      id: first,
      key_id: member.keyId,
      bill: { amount: 1, pricing_rule: expect.any(String) as unknown },
    });

    const strangerSearch = await consoleCall(
      gateway,
      'GET',
      `/console/api/requests?request_id=${strangers}`,
      { signed: member.signed },
    );
    expect(strangerSearch.statusCode).toBe(200);
    expect(strangerSearch.json<{ data: unknown[] }>().data).toEqual([]);
    const strangerDetail = await consoleCall(gateway, 'GET', `/console/api/requests/${strangers}`, {
      signed: member.signed,
    });
    expect(strangerDetail.statusCode).toBe(404);
  });

  it('the CSV export has the list’s records and filters, written as the statements are', async () => {
    gateway = await startGateway(dialect, { config: oneMicroYuanEmbeddingsConfig() });
    const member = await signedInMember(gateway, 1_000);
    const ids = [await embed(gateway, member.key), await embed(gateway, member.key)];
    const stranger = await gateway.account(1_000);
    await embed(gateway, stranger.key);

    const csv = await consoleCall(gateway, 'GET', '/console/api/requests.csv?model=sim-embed', {
      signed: member.signed,
    });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
    expect(csv.headers['content-disposition']).toContain('attachment');
    const lines = csv.body.split('\r\n');
    expect(lines.at(-1)).toBe('');
    expect(lines[0]).toBe(
      'created_at,request_id,key_id,idempotency_key,method,path,model,status,http_status,bill_amount_micro_yuan,price_version,pricing_rule',
    );
    const rows = lines.slice(1, -1).map((line) => line.split(','));
    expect(rows.map((cells) => cells[1])).toEqual([...ids].reverse());
    expect(rows.every((cells) => cells[2] === member.keyId && cells[9] === '1')).toBe(true);

    const none = await consoleCall(gateway, 'GET', '/console/api/requests.csv?model=other', {
      signed: member.signed,
    });
    expect(none.body.split('\r\n')).toHaveLength(2);
    const bad = await consoleCall(gateway, 'GET', '/console/api/requests.csv?status=nope', {
      signed: member.signed,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'status' } });
    const keyOnExport = await gateway.app.inject({
      method: 'GET',
      url: '/console/api/requests.csv',
      headers: { authorization: `Bearer ${member.key}` },
    });
    expect(keyOnExport.statusCode).toBe(401);
  });

  it('the overview reads the account’s spend per day and model, as /v1/account/usage does', async () => {
    gateway = await startGateway(dialect, { config: oneMicroYuanEmbeddingsConfig() });
    const member = await signedInMember(gateway, 1_000);
    await embed(gateway, member.key);
    await embed(gateway, member.key);
    const stranger = await gateway.account(1_000);
    await embed(gateway, stranger.key);
    const usage = await consoleCall(gateway, 'GET', '/console/api/usage', {
      signed: member.signed,
    });
    expect(usage.statusCode).toBe(200);
    const byKey = await gateway.call('GET', '/v1/account/usage', { key: member.key });
    expect(usage.json()).toEqual(byKey.json());
    expect(usage.json()).toMatchObject({ totals: { requests: 2, amount: 2 } });
    const bad = await consoleCall(gateway, 'GET', '/console/api/usage?from=yesterday', {
      signed: member.signed,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'from' } });
  });
});
