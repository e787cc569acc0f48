import { afterEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { shortTimeoutsConfig, startGateway, type TestGateway } from '../helpers/gateway.js';

const config = shortTimeoutsConfig();

describeEachDialect('upstream failures on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function embed(input: string) {
    gateway = gateway ?? (await startGateway(dialect, { config }));
    const { accountId, key } = await gateway.account(1_000_000);
    const response = await gateway.call('POST', '/v1/embeddings', {
      key,
      body: { model: 'sim-embed', input },
    });
    const record = await gateway.call(
      'GET',
      `/v1/requests/${String(response.headers['x-service-request-id'])}`,
      { key },
    );
    return {
      response,
      record: record.json<Record<string, unknown>>(),
      balance: await gateway.balance(accountId),
    };
  }

  it('releases the hold when the upstream answers an error status, and hides its body', async () => {
    const { response, record, balance } = await embed('boom [sim:fail=500]');
    expect(response.statusCode).toBe(502);
    expect(response.json()).toMatchObject({ error: { code: 'UPSTREAM_ERROR' } });
    expect(response.body).not.toContain('invalid_request_error');
    expect(record).toMatchObject({
      status: 'failed',
      http_status: 502,
      reserve: { state: 'released' },
      bill: null,
      canSettle: false,
    });
    expect(record['upstream_request_id']).toMatch(/^sim-/);
    expect(balance).toEqual({ balance: 1_000_000, held: 0, available: 1_000_000 });
  });

  it('maps an overloaded upstream to 503 MODEL_UNAVAILABLE and charges nothing', async () => {
    const { response, balance } = await embed('busy [sim:fail=503]');
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ error: { code: 'MODEL_UNAVAILABLE' } });
    expect(balance.held).toBe(0);
    expect(balance.balance).toBe(1_000_000);
  });

  it('keeps the hold and marks the record submission_unknown when the upstream hangs', async () => {
    const { response, record, balance } = await embed('silence [sim:hang]');
    expect(response.statusCode).toBe(504);
    expect(response.json()).toMatchObject({ error: { code: 'UPSTREAM_TIMEOUT' } });
    expect(record).toMatchObject({
      status: 'submission_unknown',
      reserve: { state: 'open' },
      result: null,
      canSettle: false,
    });
    expect(balance.held).toBeGreaterThan(0);
    expect(balance.balance).toBe(1_000_000);

    // An operator resolves it: release, with a reason; the money comes back exactly once.
    const requestId = String(record['id']);
    const resolved = await gateway?.admin('POST', `/admin/v1/requests/${requestId}/resolve`, {
      action: 'release',
      reason: 'upstream confirmed it never ran',
    });
    expect(resolved).toMatchObject({
      status: 'resolved',
      reserve: { state: 'released' },
      resolution: { action: 'release', reason: 'upstream confirmed it never ran' },
    });
    const again = await gateway?.app.inject({
      method: 'POST',
      url: `/admin/v1/requests/${requestId}/resolve`,
      headers: { authorization: 'Bearer test-admin-token-0123456789' },
      payload: { action: 'release', reason: 'twice' },
    });
    expect(again?.statusCode).toBe(409);
  });

  it('never reports an unpriced result as a success: a body without usage is submission_unknown', async () => {
    const { response, record, balance } = await embed('no meter [sim:no_usage]');
    expect(response.statusCode).toBe(502);
    expect(record).toMatchObject({
      status: 'submission_unknown',
      result: null,
      reserve: { state: 'open' },
    });
    expect(balance.held).toBeGreaterThan(0);
    const requestId = String(record['id']);
    const resolved = await gateway?.admin('POST', `/admin/v1/requests/${requestId}/resolve`, {
      action: 'capture',
      amount: 3,
      reason: 'provider invoice line 42',
    });
    expect(resolved).toMatchObject({
      status: 'resolved',
      bill: { amount: 3, captured: true },
      reserve: { state: 'captured' },
    });
  });

  it('refuses an operator resolution without a reason, changing nothing', async () => {
    const { record } = await embed('silence again [sim:hang]');
    const response = await gateway?.app.inject({
      method: 'POST',
      url: `/admin/v1/requests/${String(record['id'])}/resolve`,
      headers: { authorization: 'Bearer test-admin-token-0123456789' },
      payload: { action: 'release' },
    });
    expect(response?.statusCode).toBe(400);
    expect(response?.json()).toMatchObject({ error: { code: 'INVALID_INPUT', param: 'reason' } });
    await gateway?.admin('POST', `/admin/v1/requests/${String(record['id'])}/resolve`, {
      action: 'release',
      reason: 'cleanup',
    });
  });
});
