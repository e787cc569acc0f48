import { afterEach, describe, expect, it } from 'vitest';
import { insuresAnswer, insuresFault } from '../../src/chat/zero-completion.js';
import { defaultConfig } from '../../src/config/default-config.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/**
 * Zero-completion insurance: a caller who received no output because the upstream failed pays
 * nothing, and the record says why; an answer with output is charged as ever. Risk: charging
 * (or holding for an operator) a stream that died before its first word.
 */
const insured = testConfig({
  upstreams: {
    simulator: {
      kind: 'simulator',
      timeouts: { connect_ms: 1_000, first_byte_ms: 1_000, idle_ms: 400 },
    },
  },
});
const uninsured = testConfig({
  ...insured,
  models: defaultConfig.models.map((model) =>
    model.id === 'sim-chat' ? { ...model, zero_completion_insurance: false } : model,
  ),
});

interface RecordBody {
  status: string;
  reserve: { state: string };
  bill: { amount: number; pricing_rule: string | null } | null;
  error: { code: string; message: string } | null;
}

describeEachDialect('zero-completion insurance on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function chat(content: string, stream = true) {
    if (gateway === undefined) throw new Error('no gateway');
    const { accountId, key } = await gateway.account(100_000_000);
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      body: { model: 'sim-chat', stream, messages: [{ role: 'user', content }], max_tokens: 100 },
    });
    const requestId = String(response.headers['x-service-request-id']);
    const record = (
      await gateway.call('GET', `/v1/requests/${requestId}`, { key })
    ).json<RecordBody>();
    const operatorView = await gateway.admin('GET', `/admin/v1/requests/${requestId}`);
    return { response, record, operatorView, balance: await gateway.balance(accountId) };
  }

  it('a stream cut before any output is not charged, its hold released, and the record says so', async () => {
    gateway = await startGateway(dialect, { config: insured });
    // One chunk (the role, no text), then the connection drops.
    const { response, record, operatorView, balance } = await chat('hello [sim:cut_after=1]');
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('zero-completion insurance');
    expect(record).toMatchObject({
      status: 'failed',
      reserve: { state: 'released' },
      error: { code: 'UPSTREAM_ERROR', message: expect.stringContaining('nothing was charged') },
    });
    expect(operatorView['ending_rule']).toContain('zero_completion_insurance');
    expect(balance).toEqual({ balance: 100_000_000, held: 0, available: 100_000_000 });
  });

  it('a stream cut after output is not insured: outcome unknown, hold kept', async () => {
    gateway = await startGateway(dialect, { config: insured });
    const { record, balance } = await chat('one two three four [sim:cut_after=3]');
    expect(record).toMatchObject({ status: 'submission_unknown', reserve: { state: 'open' } });
    expect(balance.held).toBeGreaterThan(0);
    await gateway.admin('POST', `/admin/v1/requests/${await onlyRequestId()}/resolve`, {
      action: 'release',
      reason: 'test cleanup',
    });
  });

  it('an answer with tokens is charged as ever', async () => {
    gateway = await startGateway(dialect, { config: insured });
    for (const stream of [true, false]) {
      const { record, balance } = await chat('tell me something', stream);
      expect(record.status).toBe('succeeded');
      expect(record.bill?.amount).toBeGreaterThan(0);
      expect(record.bill?.pricing_rule).not.toContain('zero_completion_insurance');
      expect(balance.balance).toBe(100_000_000 - (record.bill?.amount ?? 0));
    }
  });

  it('turned off for a model, the same cut stream stays submission_unknown with its hold', async () => {
    gateway = await startGateway(dialect, { config: uninsured });
    const { record, balance } = await chat('hello [sim:cut_after=1]');
    expect(record).toMatchObject({ status: 'submission_unknown', reserve: { state: 'open' } });
    expect(balance.held).toBeGreaterThan(0);
    await gateway.admin('POST', `/admin/v1/requests/${await onlyRequestId()}/resolve`, {
      action: 'release',
      reason: 'test cleanup',
    });
  });

  async function onlyRequestId(): Promise<string> {
    if (gateway === undefined) throw new Error('no gateway');
    const rows = await gateway.services.store.db
      .selectFrom('requests')
      .select('id')
      .where('status', '=', 'submission_unknown')
      .execute();
    return rows[0]?.id ?? '';
  }
});

describe('the zero-completion rule', () => {
  const seen = (completionTokens: number | undefined, finishReason: string | null) => ({
    producedOutput: false,
    finishReason,
    completionTokens,
  });

  it('insures a complete answer only with no output tokens and no finish reason, when on', () => {
    expect(insuresAnswer(true, seen(0, null))).toBe(true);
    expect(insuresAnswer(true, seen(0, 'stop'))).toBe(false);
    expect(insuresAnswer(true, seen(1, null))).toBe(false);
    expect(insuresAnswer(false, seen(0, null))).toBe(false);
  });

  it('insures a fault only before any output', () => {
    expect(insuresFault(true, seen(undefined, null))).toBe(true);
    expect(insuresFault(true, { ...seen(undefined, null), producedOutput: true })).toBe(false);
    expect(insuresFault(true, seen(5, null))).toBe(false);
    expect(insuresFault(false, seen(undefined, null))).toBe(false);
  });
});
