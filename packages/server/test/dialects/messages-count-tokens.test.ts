import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * Risk: counting tokens (Claude Code does it to manage its context) costs money, leaves a record
 * or a hold, demands an Idempotency-Key Claude Code cannot send, or answers 404 for a model the
 * key may call; or its figure is absurd next to the real usage.
 */
describeEachDialect('POST /v1/messages/count_tokens on $name', (dialect) => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startGateway(dialect);
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const body = {
    model: 'sim-chat',
    system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
    tools: [
      { name: 'ls', description: 'list files', input_schema: { type: 'object', properties: {} } },
    ],
    messages: [{ role: 'user', content: 'how many tokens is this sentence, roughly?' }],
  };

  it('answers an estimate without a key, a charge, a hold or a record', async () => {
    const { key, accountId } = await gateway.account(1_000_000);
    const counted = await gateway.call('POST', '/v1/messages/count_tokens', {
      key,
      body,
      idempotencyKey: null,
    });
    expect(counted.statusCode, counted.body).toBe(200);
    const { input_tokens: estimate } = counted.json<{ input_tokens: number }>();
    expect(counted.json()).toEqual({ input_tokens: estimate });
    expect(await gateway.balance(accountId)).toEqual({
      balance: 1_000_000,
      held: 0,
      available: 1_000_000,
    });
    const records = await gateway.call('GET', '/v1/requests', { key });
    expect(records.json<{ data: unknown[] }>().data).toEqual([]);

    // Not absurd: within a small factor of what the same input is billed as.
    const answered = await gateway.call('POST', '/v1/messages', {
      key,
      body: { ...body, max_tokens: 50 },
    });
    const usage = answered.json<{ usage: { input_tokens: number } }>().usage;
    expect(estimate).toBeGreaterThanOrEqual(usage.input_tokens);
    expect(estimate).toBeLessThan(usage.input_tokens * 4);
  });

  it('404 in Anthropic shape for a model the key may not call; generation fields refused', async () => {
    const { key } = await gateway.account(0);
    const unknown = await gateway.call('POST', '/v1/messages/count_tokens', {
      key,
      body: { ...body, model: 'claude-unknown' },
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const generation = await gateway.call('POST', '/v1/messages/count_tokens', {
      key,
      body: { ...body, max_tokens: 10 },
    });
    expect(generation.statusCode).toBe(400);
    expect(generation.json<{ error: { message: string } }>().error.message).toMatch(
      /^max_tokens: /,
    );
    // A key restricted to another model gets the same 404 as for an unknown one.
    const embedOnly = await gateway.account(0, { models: ['sim-embed'] });
    const restricted = await gateway.call('POST', '/v1/messages/count_tokens', {
      key: embedOnly.key,
      body,
    });
    expect(restricted.statusCode).toBe(404);
  });
});
