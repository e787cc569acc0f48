import type { BillLineItem, RequestRecord } from '@tollgate/protocol';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';
import { consoleCall, signedInMember } from '../console/console-member.js';

/**
 * Risk: a bill nobody can check — a record whose amount is not the sum of anything it shows, line
 * items lost on the way to the database (the batched capture, a stream), shown by one view and not
 * another, or an account charged something else than the items add up to. Through the gateway and
 * the simulator, on both databases: chat plain and streamed (below and above a length tier, with
 * a per-request fee), a chat served by an Anthropic Messages upstream, and embeddings; each
 * record's items are recomputed from themselves alone, they sum to `bill.amount`, the account
 * paid exactly the sum of the bills, and the ledger check is clean.
 */

const SIM_CHAT = defaultConfig.models.find((model) => model.id === 'sim-chat');
if (SIM_CHAT === undefined) throw new Error('no sim-chat');
const { upstream: _upstream, ...simChat } = SIM_CHAT;

/** Input tokens above which sim-chat's requests are priced at the tier. */
const THRESHOLD = 40;
const PRICES = {
  input_per_million_tokens: 2_000_000,
  cached_input_per_million_tokens: 500_000,
  output_per_million_tokens: 8_000_000,
  tiers: [
    {
      above_input_tokens: THRESHOLD,
      prices: { input_per_million_tokens: 4_000_000, output_per_million_tokens: 16_000_000 },
    },
  ],
  per_request: 1_000,
};

const SHORT = 'hello there';
const LONG = Array.from({ length: 60 }, (_, index) => `word${index}`).join(' ');

describeEachDialect('line items on the record ($name)', (dialect) => {
  let gateway: TestGateway;
  let member: Awaited<ReturnType<typeof signedInMember>>;
  const START = 1_000_000_000;
  const billed: number[] = [];
  beforeAll(async () => {
    gateway = await startGateway(dialect, {
      config: testConfig({
        upstreams: {
          simulator: { kind: 'simulator' },
          anthropic: { kind: 'simulator', chat_api: 'messages' },
        },
        models: [
          { ...simChat, upstream: 'simulator', prices: PRICES },
          {
            ...simChat,
            id: 'sim-claude',
            channels: [{ id: 'claude', upstream: 'anthropic', model: 'sim-chat' }],
          },
          {
            id: 'sim-embed',
            upstream: 'simulator',
            families: ['embeddings'],
            prices: { input_per_million_tokens: 500_000 },
            default_dimensions: 8,
          },
        ],
      }),
    });
    member = await signedInMember(gateway, START);
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  /** The caller's record of an answer, its line items checked against themselves and the bill. */
  async function recordOf(response: LightMyRequestResponse): Promise<RequestRecord> {
    expect(response.statusCode, response.body).toBe(200);
    const id = String(response.headers['x-service-request-id']);
    const record = (
      await gateway.call('GET', `/v1/requests/${id}`, { key: member.key })
    ).json<RequestRecord>();
    const bill = record.bill;
    if (bill === null) throw new Error(`${id} has no bill`);
    expect(bill.captured).toBe(true);
    const items = bill.line_items;
    if (items === null) throw new Error(`${id} has no line items`);
    for (const item of items) expect(item.amount).toBe(recomputed(item));
    expect(items.reduce((sum, item) => sum + item.amount, 0)).toBe(bill.amount);
    // The operator's view and the console's record show the same items.
    const operator = await gateway.admin('GET', `/admin/v1/requests/${id}`);
    expect((operator['bill'] as { line_items: unknown }).line_items).toEqual(items);
    const console = await consoleCall(gateway, 'GET', `/console/api/requests/${id}`, {
      signed: member.signed,
    });
    expect(console.json<RequestRecord>().bill?.line_items).toEqual(items);
    billed.push(bill.amount);
    return record;
  }

  const chat = (model: string, content: string, extra: Record<string, unknown> = {}) =>
    gateway.call('POST', '/v1/chat/completions', {
      key: member.key,
      body: { model, messages: [{ role: 'user', content }], max_tokens: 64, ...extra },
    });

  it('a chat below the tier: base prices and the fee, each item recomputable', async () => {
    const record = await recordOf(await chat('sim-chat', SHORT));
    const usage = record.usage ?? {};
    const prompt = usage['prompt_tokens'] ?? 0;
    const completion = usage['completion_tokens'] ?? 0;
    expect(prompt).toBeLessThanOrEqual(THRESHOLD);
    expect(record.bill?.line_items).toEqual([
      item('input', prompt, 2_000_000),
      item('output', completion, 8_000_000),
      { item: 'request', units: 1, unit_price: 1_000, amount: 1_000 },
    ]);
  });

  it('a streamed chat above the tier: the whole request at the tier prices', async () => {
    const record = await recordOf(
      await chat('sim-chat', LONG, { stream: true, stream_options: { include_usage: true } }),
    );
    const usage = record.usage ?? {};
    const prompt = usage['prompt_tokens'] ?? 0;
    expect(prompt).toBeGreaterThan(THRESHOLD);
    expect(record.bill?.line_items).toEqual([
      item('input', prompt, 4_000_000),
      item('output', usage['completion_tokens'] ?? 0, 16_000_000),
      { item: 'request', units: 1, unit_price: 1_000, amount: 1_000 },
    ]);
    expect(record.bill?.pricing_rule).toContain(`tier above ${THRESHOLD} input tokens`);
  });

  it('a chat served by an Anthropic upstream: its usage with the cache counts, billed by its items', async () => {
    const record = await recordOf(await chat('sim-claude', SHORT));
    expect(record.usage).toMatchObject({ cache_write_tokens: 0, cache_write_1h_tokens: 0 });
    expect(record.bill?.line_items?.map((line) => line.item)).toEqual(['input', 'output']);
  });

  it('embeddings: one input item', async () => {
    const response = await gateway.call('POST', '/v1/embeddings', {
      key: member.key,
      body: { model: 'sim-embed', input: 'the quick brown fox' },
    });
    const record = await recordOf(response);
    expect(record.bill?.line_items).toEqual([
      item('input', record.usage?.['prompt_tokens'] ?? 0, 500_000),
    ]);
  });

  it('the account paid exactly the sum of the bills, nothing held', async () => {
    expect(billed).toHaveLength(4);
    const paid = billed.reduce((sum, amount) => sum + amount, 0);
    expect(await gateway.balance(member.accountId)).toEqual({
      balance: START - paid,
      held: 0,
      available: START - paid,
    });
  });
});

function recomputed(line: BillLineItem): number {
  return 'price_per_million' in line
    ? Number((BigInt(line.units) * BigInt(line.price_per_million) + 999_999n) / 1_000_000n)
    : line.units * line.unit_price;
}

function item(name: 'input' | 'output', units: number, pricePerMillion: number): BillLineItem {
  return {
    item: name,
    units,
    price_per_million: pricePerMillion,
    amount: Number((BigInt(units) * BigInt(pricePerMillion) + 999_999n) / 1_000_000n),
  };
}
