import { randomUUID } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/media.js';

/**
 * Risk: Claude Code and Anthropic's SDK cannot use the gateway (a shape the SDK does not read, a
 * stream it cannot assemble, a tool loop that breaks on the way back, an error it retries and
 * gets charged twice for), or the money of a Messages turn differs from a chat turn's. Driven
 * with the official `@anthropic-ai/sdk` over real HTTP, on every dialect; every charge is
 * checked against the records and the ledger.
 */
describeEachDialect('the official Anthropic SDK against /v1/messages on $name', (dialect) => {
  let gateway: TestGateway;
  let root: string;
  let key: string;
  let accountId: string;
  const startBalance = 1_000_000_000;
  /** Every answer that may have charged the account: its request id and the key that reads it. */
  const charged: { requestId: string; key: string }[] = [];
  const charge = (requestId: string | null | undefined, by = key) =>
    charged.push({ requestId: String(requestId), key: by });
  const client = (options: Partial<ConstructorParameters<typeof Anthropic>[0]> = {}) =>
    new Anthropic({ apiKey: key, baseURL: root, maxRetries: 0, ...options });
  const fresh = () => ({ headers: { 'Idempotency-Key': randomUUID() } });

  beforeAll(async () => {
    gateway = await startGateway(dialect);
    ({ key, accountId } = await gateway.account(startBalance));
    root = (await gateway.listen()).replace(/\/v1$/, '');
  });
  afterAll(async () => {
    // The balance is the start less exactly what the records of this account say they charged.
    let total = 0;
    for (const { requestId, key: reader } of charged) {
      const record = (
        await gateway.call('GET', `/v1/requests/${requestId}`, { key: reader })
      ).json<{
        status: string;
        bill: { amount: number; captured: boolean } | null;
      }>();
      expect(record.status).toBe('succeeded');
      total += record.bill?.captured === true ? record.bill.amount : 0;
    }
    expect(total).toBeGreaterThan(0);
    expect(await gateway.balance(accountId)).toMatchObject({
      balance: startBalance - total,
      held: 0,
    });
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  it('messages.create answers an Anthropic message, billed like a chat turn', async () => {
    const { data, response } = await client()
      .messages.create(
        { model: 'sim-chat', max_tokens: 100, messages: [{ role: 'user', content: 'hello sdk' }] },
        fresh(),
      )
      .withResponse();
    const requestId = String(response.headers.get('x-service-request-id'));
    charge(requestId);
    expect(data).toMatchObject({
      id: `msg_${requestId.replace(/^req_/, '')}`,
      type: 'message',
      role: 'assistant',
      model: 'sim-chat',
      stop_reason: 'end_turn',
      stop_sequence: null,
      content: [{ type: 'text', text: 'Simulated reply to: hello sdk' }],
    });
    expect(data.usage.input_tokens).toBeGreaterThan(0);
    expect(data.usage.output_tokens).toBeGreaterThan(0);
    expect(data.usage).toMatchObject({
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
  });

  it('messages.stream assembles the same message with finalMessage()', async () => {
    const stream = client().messages.stream(
      {
        model: 'sim-chat',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'stream to the sdk' }],
      },
      fresh(),
    );
    let text = '';
    stream.on('text', (delta) => {
      text += delta;
    });
    const message = await stream.finalMessage();
    charge(stream.response?.headers.get('x-service-request-id'));
    expect(text).toBe('Simulated reply to: stream to the sdk');
    expect(message.content).toEqual([{ type: 'text', text }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    // The record keeps the same message object a plain request gets.
    const record = (
      await gateway.call(
        'GET',
        `/v1/requests/${stream.response?.headers.get('x-service-request-id')}`,
        { key },
      )
    ).json<{ result: unknown }>();
    expect(JSON.stringify(record)).toContain(`"id":"${message.id}"`);
  });

  it('a tool loop: tool_use, then tool_result, then the answer', async () => {
    const tools: Anthropic.Tool[] = [
      {
        name: 'get_time',
        description: 'The time in a city',
        input_schema: {
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
        },
      },
    ];
    const question: Anthropic.MessageParam = { role: 'user', content: 'use get_time for Tokyo' };
    const { data: first, response } = await client()
      .messages.create({ model: 'sim-chat', max_tokens: 200, tools, messages: [question] }, fresh())
      .withResponse();
    charge(response.headers.get('x-service-request-id'));
    expect(first.stop_reason).toBe('tool_use');
    const toolUse = first.content.find((block) => block.type === 'tool_use');
    expect(toolUse).toMatchObject({ type: 'tool_use', name: 'get_time' });
    expect(typeof (toolUse as Anthropic.ToolUseBlock).input).toBe('object');
    const { data: second, response: secondResponse } = await client()
      .messages.create(
        {
          model: 'sim-chat',
          max_tokens: 200,
          tools,
          messages: [
            question,
            { role: 'assistant', content: first.content },
            {
              role: 'user',
              content: [
                {
                  type: 'tool_result',
                  tool_use_id: (toolUse as Anthropic.ToolUseBlock).id,
                  content: '09:00 JST',
                },
              ],
            },
          ],
        },
        fresh(),
      )
      .withResponse();
    charge(secondResponse.headers.get('x-service-request-id'));
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content[0]).toMatchObject({ type: 'text' });
    expect((second.content[0] as Anthropic.TextBlock).text).toContain('09:00 JST');
  });

  it('an image block reaches a vision model as the same bytes', async () => {
    const image = png(4, 3);
    const { data, response } = await client()
      .messages.create(
        {
          model: 'sim-vision',
          max_tokens: 200,
          messages: [
            {
              role: 'user',
              content: [
                {
                  type: 'image',
                  source: {
                    type: 'base64',
                    media_type: 'image/png',
                    data: image.toString('base64'),
                  },
                },
                { type: 'text', text: 'what is this' },
              ],
            },
          ],
        },
        fresh(),
      )
      .withResponse();
    charge(response.headers.get('x-service-request-id'));
    const text = (data.content[0] as Anthropic.TextBlock).text;
    expect(text).toContain(`[image/png ${image.length} bytes`);
    expect(text).toContain('what is this');
  });

  it('a key created with "idempotency": "optional" needs no Idempotency-Key (Claude Code), Bearer or x-api-key', async () => {
    const optional = await gateway.newKey(accountId, { idempotency: 'optional' });
    for (const sdk of [
      new Anthropic({ authToken: optional.key, apiKey: null, baseURL: root, maxRetries: 0 }),
      new Anthropic({ apiKey: optional.key, baseURL: root, maxRetries: 0 }),
    ]) {
      const { data, response } = await sdk.messages
        .create(
          {
            model: 'sim-chat',
            max_tokens: 50,
            messages: [{ role: 'user', content: 'no key here' }],
          },
          { query: { beta: 'true' } },
        )
        .withResponse();
      expect(data.content).toEqual([{ type: 'text', text: 'Simulated reply to: no key here' }]);
      const assigned = response.headers.get('idempotency-key');
      expect(assigned).toMatch(/^[0-9a-f-]{36}$/);
      const record = await gateway.call('GET', `/v1/requests?idempotency_key=${assigned}`, {
        key: optional.key,
      });
      expect(record.json()).toMatchObject({ status: 'succeeded' });
      charge(response.headers.get('x-service-request-id'), optional.key);
    }
  });

  it('a 402 is an APIError with status 402 that the SDK does not retry', async () => {
    const poor = await gateway.account(1);
    let requests = 0;
    const sdk = new Anthropic({
      apiKey: poor.key,
      baseURL: root,
      // The SDK's own default retries: the answer must tell it not to.
      maxRetries: 2,
      fetch: (input, init) => {
        requests += 1;
        return fetch(input, init);
      },
    });
    const failure = await sdk.messages
      .create(
        { model: 'sim-chat', max_tokens: 100, messages: [{ role: 'user', content: 'too dear' }] },
        fresh(),
      )
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    const apiError = failure as InstanceType<typeof Anthropic.APIError>;
    expect(apiError.status).toBe(402);
    expect(apiError.error).toMatchObject({ type: 'error', error: { type: 'billing_error' } });
    expect(apiError.requestID ?? (apiError.error as { request_id?: string }).request_id).toMatch(
      /^req_/,
    );
    expect(requests).toBe(1);
    expect(await gateway.balance(poor.accountId)).toMatchObject({ balance: 1, held: 0 });
  });
});
