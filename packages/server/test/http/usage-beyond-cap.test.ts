import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { ADMIN_TOKEN, startGateway, type TestGateway } from '../helpers/gateway.js';

interface RecordBody {
  status: string;
  reserve: { amount: number; state: string };
  bill: { amount: number; pricing_rule: string };
  usage: Record<string, number>;
  usage_exceeded_cap: { detail: string; reviewed_at: string | null } | null;
}

async function flaggedMetric(gateway: TestGateway): Promise<number> {
  const text = (await gateway.app.inject({ method: 'GET', url: '/metrics' })).body;
  return Number(/^tollgate_usage_exceeded_cap_total (\d+)/m.exec(text)?.[1] ?? 'NaN');
}

describeEachDialect('usage an upstream reports beyond the cap on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
  });

  /** A chat whose upstream reports 100,000 output tokens against `max_tokens: 5`. */
  function overCapChat(key: string, stream = false) {
    if (gateway === undefined) throw new Error('no gateway');
    return gateway.call('POST', '/v1/chat/completions', {
      key,
      body: {
        model: 'sim-chat',
        max_tokens: 5,
        ...(stream ? { stream: true } : {}),
        messages: [{ role: 'user', content: 'hi [sim:extra_tokens=100000]' }],
      },
    });
  }

  async function record(key: string, requestId: string): Promise<RecordBody> {
    if (gateway === undefined) throw new Error('no gateway');
    return (await gateway.call('GET', `/v1/requests/${requestId}`, { key })).json<RecordBody>();
  }

  it('100,000 output tokens against max_tokens 5: billed at the cap, within the hold, flagged', async () => {
    gateway = await startGateway(dialect);
    const { accountId, key } = await gateway.account(10_000_000);
    const response = await overCapChat(key);
    expect(response.statusCode).toBe(200);
    const read = await record(key, String(response.headers['x-service-request-id']));
    expect(read.status).toBe('succeeded');
    expect(read.bill.amount).toBeLessThanOrEqual(read.reserve.amount);
    expect(read.usage_exceeded_cap?.detail).toMatch(
      /completion_tokens: upstream reported \d+, billed the bound 5/,
    );
    expect(read.usage_exceeded_cap?.reviewed_at).toBeNull();
    expect(read.bill.pricing_rule).toContain('usage_exceeded_cap');
    expect(await gateway.balance(accountId)).toEqual({
      balance: 10_000_000 - read.bill.amount,
      held: 0,
      available: 10_000_000 - read.bill.amount,
    });
    expect(await flaggedMetric(gateway)).toBe(1);
  });

  it('a streamed answer with output beyond the cap is billed at the cap and flagged', async () => {
    gateway = await startGateway(dialect);
    const { accountId, key } = await gateway.account(10_000_000);
    const response = await overCapChat(key, true);
    expect(response.statusCode).toBe(200);
    expect(response.body).not.toContain('"error"');
    const read = await record(key, String(response.headers['x-service-request-id']));
    expect(read.status).toBe('succeeded');
    expect(read.bill.amount).toBeLessThanOrEqual(read.reserve.amount);
    expect(read.usage_exceeded_cap?.detail).toContain('completion_tokens');
    expect((await gateway.balance(accountId)).balance).toBe(10_000_000 - read.bill.amount);
  });

  it('embeddings input far above the upper estimate is billed at twice the estimate and flagged', async () => {
    gateway = await startGateway(dialect);
    const { key } = await gateway.account(10_000_000);
    const input = 'hello [sim:extra_tokens=100000]';
    const estimate = Buffer.byteLength(input) + 8;
    const response = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input },
    });
    expect(response.statusCode).toBe(200);
    const read = await record(key, String(response.headers['x-service-request-id']));
    expect(read.usage_exceeded_cap?.detail).toContain(`billed the bound ${2 * estimate}`);
    expect(read.bill.pricing_rule).toContain(`prompt_tokens ${2 * estimate} `);
  });

  it('an operator lists flagged records and reviews each once, with a reason; no money moves', async () => {
    gateway = await startGateway(dialect);
    const client = gateway;
    const { accountId, key } = await client.account(10_000_000);
    const flagged = await overCapChat(key);
    const requestId = String(flagged.headers['x-service-request-id']);
    await client.call('POST', '/v1/chat/completions', {
      key,
      body: {
        model: 'sim-chat',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'credible' }],
      },
    });
    const listed = await client.admin('GET', '/admin/v1/requests?usage_exceeded_cap=unreviewed');
    expect((listed['data'] as { id: string }[]).map((row) => row.id)).toEqual([requestId]);
    const before = await client.balance(accountId);

    const review = async (body: unknown) =>
      client.app.inject({
        method: 'POST',
        url: `/admin/v1/requests/${requestId}/review-usage`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: body as object,
      });
    expect((await review({})).statusCode).toBe(400);
    const reviewed = await review({ reason: 'upstream bug report #12, billed at cap is right' });
    expect(reviewed.statusCode).toBe(200);
    expect(reviewed.json()).toMatchObject({
      id: requestId,
      account_id: accountId,
      usage_exceeded_cap: { review: 'upstream bug report #12, billed at cap is right' },
    });
    const again = await review({ reason: 'twice' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: { code: 'USAGE_REVIEW_NOT_ALLOWED' } });
    const unreviewed = await client.admin(
      'GET',
      '/admin/v1/requests?usage_exceeded_cap=unreviewed',
    );
    expect(unreviewed['data']).toEqual([]);
    const all = await client.admin('GET', '/admin/v1/requests?usage_exceeded_cap=all');
    expect(all['data']).toHaveLength(1);
    expect(await client.balance(accountId)).toEqual(before);
  });

  it('credible usage is not flagged', async () => {
    gateway = await startGateway(dialect);
    const { key } = await gateway.account(10_000_000);
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: { model: 'sim-chat', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
    });
    const read = await record(key, String(response.headers['x-service-request-id']));
    expect(read.usage_exceeded_cap).toBeNull();
    expect(await flaggedMetric(gateway)).toBe(0);
  });
});
