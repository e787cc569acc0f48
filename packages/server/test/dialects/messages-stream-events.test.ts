import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';

interface Frame {
  event: string | undefined;
  data: Record<string, unknown>;
}

/** The SSE text as frames; a frame without an `event:` line keeps `event` undefined. */
function framesOf(body: string): Frame[] {
  return body
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length);
      const data = lines.find((line) => line.startsWith('data: '))?.slice('data: '.length) ?? '{}';
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

/**
 * Each frame as `name index kind`, consecutive repeats folded: the order of a stream whatever
 * how many words the answer has.
 */
function outline(frames: readonly Frame[]): string[] {
  const lines = frames.map(({ event, data }) => {
    const index = typeof data['index'] === 'number' ? ` ${data['index']}` : '';
    const block = (data['content_block'] ?? data['delta']) as { type?: string } | undefined;
    const kind = event === 'message_delta' ? '' : block?.type === undefined ? '' : ` ${block.type}`;
    return `${String(event)}${index}${kind}`;
  });
  return lines.filter((line, at) => line !== lines[at - 1]);
}

/**
 * Risk: a stream that Anthropic's SDK or Claude Code cannot follow (an event without a name,
 * blocks out of order or wrongly indexed, a missing ping or message_stop, usage not where the
 * SDK reads it), an error after the stream began that reads as a success, or a replay that
 * charges again or sends something else.
 */
describeEachDialect('Anthropic stream events of /v1/messages on $name', (dialect) => {
  let gateway: TestGateway;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    gateway = await startGateway(dialect);
    ({ key, accountId } = await gateway.account(1_000_000_000));
  });
  afterAll(async () => {
    await gateway.expectLedgerClean();
    await gateway.close();
  });

  const stream = (body: Record<string, unknown>, idempotencyKey = randomUUID()) =>
    gateway.call('POST', '/v1/messages?beta=true', {
      key,
      idempotencyKey,
      body: { model: 'sim-chat', max_tokens: 4_000, stream: true, ...body },
      headers: { 'anthropic-version': '2023-06-01' },
    });

  it('golden transcript: thinking then text, every frame named, indexes in order', async () => {
    const response = await stream({
      thinking: { type: 'enabled', budget_tokens: 2_048 },
      messages: [{ role: 'user', content: 'think about golden streams' }],
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/event-stream');
    const frames = framesOf(response.body);
    for (const frame of frames) expect(frame.event).toBe(frame.data['type']);
    expect(outline(frames)).toEqual([
      'message_start',
      'ping',
      'content_block_start 0 thinking',
      'content_block_delta 0 thinking_delta',
      'content_block_delta 0 signature_delta',
      'content_block_stop 0',
      'content_block_start 1 text',
      'content_block_delta 1 text_delta',
      'content_block_stop 1',
      'message_delta',
      'message_stop',
    ]);
    const start = frames[0]?.data['message'] as Record<string, unknown>;
    const requestId = String(response.headers['x-service-request-id']);
    expect(start).toMatchObject({
      id: `msg_${requestId.slice('req_'.length)}`,
      type: 'message',
      role: 'assistant',
      model: 'sim-chat',
      content: [],
      stop_reason: null,
      usage: {
        input_tokens: 0,
        output_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    });
    const delta = frames.find((frame) => frame.event === 'message_delta')?.data;
    expect(delta).toMatchObject({ delta: { stop_reason: 'end_turn', stop_sequence: null } });
    const usage = (delta as { usage: Record<string, number> }).usage;
    expect(usage['output_tokens']).toBeGreaterThan(0);
    expect(usage['input_tokens']).toBeGreaterThan(0);

    // The record's body is the message a plain request gets, assembled from what was sent.
    const record = (await gateway.call('GET', `/v1/requests/${requestId}`, { key })).json<{
      result: { content: { type: string; text?: string; thinking?: string }[] };
      status: string;
    }>();
    expect(record.status).toBe('succeeded');
    const texts = frames
      .filter(
        (frame) => (frame.data['delta'] as { type?: string } | undefined)?.type === 'text_delta',
      )
      .map((frame) => (frame.data['delta'] as { text: string }).text)
      .join('');
    expect(record.result).toMatchObject({
      id: start['id'],
      type: 'message',
      stop_reason: 'end_turn',
      usage,
      content: [
        { type: 'thinking', signature: expect.stringMatching(/^tollgate\.v1\./) as unknown },
        { type: 'text', text: texts },
      ],
    });
  });

  it('golden transcript: a tool use streams input_json_delta and stops with tool_use', async () => {
    const response = await stream({
      tools: [
        {
          name: 'lookup',
          input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
        },
      ],
      messages: [{ role: 'user', content: 'use lookup please' }],
    });
    const frames = framesOf(response.body);
    expect(outline(frames)).toEqual([
      'message_start',
      'ping',
      'content_block_start 0 tool_use',
      'content_block_delta 0 input_json_delta',
      'content_block_stop 0',
      'message_delta',
      'message_stop',
    ]);
    const partial = frames
      .filter((frame) => frame.event === 'content_block_delta')
      .map((frame) => (frame.data['delta'] as { partial_json: string }).partial_json)
      .join('');
    expect(JSON.parse(partial)).toHaveProperty('q');
    expect(frames.find((frame) => frame.event === 'message_delta')?.data).toMatchObject({
      delta: { stop_reason: 'tool_use' },
    });
  });

  it('an upstream error after the stream began ends it with a named error event, hold kept', async () => {
    const before = await gateway.balance(accountId);
    const response = await stream({
      messages: [{ role: 'user', content: 'one two three four five six [sim:error_after=3]' }],
    });
    expect(response.statusCode).toBe(200);
    const frames = framesOf(response.body);
    const last = frames.at(-1);
    expect(last?.event).toBe('error');
    expect(last?.data).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    expect(String((last?.data['error'] as { message: string }).message)).toContain(
      'GET /v1/requests/',
    );
    expect(frames.some((frame) => frame.event === 'message_stop')).toBe(false);
    expect(frames.some((frame) => frame.event === 'content_block_delta')).toBe(true);
    const record = (
      await gateway.call(
        'GET',
        `/v1/requests/${String(response.headers['x-service-request-id'])}`,
        { key },
      )
    ).json<{ status: string }>();
    expect(record.status).toBe('submission_unknown');
    const after = await gateway.balance(accountId);
    expect(after.balance).toBe(before.balance);
    expect(after.held).toBeGreaterThan(before.held);
  });

  it('an upstream stream that finished without usage is billed on the gateway count, which message_delta reports', async () => {
    const response = await stream({
      messages: [{ role: 'user', content: 'count me here [sim:no_usage]' }],
    });
    expect(response.statusCode).toBe(200);
    const frames = framesOf(response.body);
    expect(frames.at(-1)?.event).toBe('message_stop');
    const delta = frames.find((frame) => frame.event === 'message_delta');
    const record = (
      await gateway.call(
        'GET',
        `/v1/requests/${String(response.headers['x-service-request-id'])}`,
        { key },
      )
    ).json<{
      status: string;
      usage: { completion_tokens: number };
      usage_counted_locally: { detail: string } | null;
    }>();
    expect(record.status).toBe('succeeded');
    expect(record.usage_counted_locally?.detail).toMatch(/^usage_counted_locally: /);
    expect((delta?.data['usage'] as { output_tokens: number }).output_tokens).toBe(
      record.usage.completion_tokens,
    );
  });

  it('the same idempotency key replays the same stream and the same answer, charged once', async () => {
    const body = { messages: [{ role: 'user', content: 'replay me once' }] };
    const idempotencyKey = randomUUID();
    const before = (await gateway.balance(accountId)).balance;
    const first = await stream(body, idempotencyKey);
    const charged = before - (await gateway.balance(accountId)).balance;
    expect(charged).toBeGreaterThan(0);
    const again = await stream(body, idempotencyKey);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['x-service-request-id']).toBe(first.headers['x-service-request-id']);
    expect(again.body).toBe(first.body);

    const plainKey = randomUUID();
    const plainBody = {
      model: 'sim-chat',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'plain replay' }],
    };
    const plain = await gateway.call('POST', '/v1/messages', {
      key,
      idempotencyKey: plainKey,
      body: plainBody,
    });
    const plainAgain = await gateway.call('POST', '/v1/messages', {
      key,
      idempotencyKey: plainKey,
      body: plainBody,
    });
    expect(plainAgain.headers['idempotent-replayed']).toBe('true');
    expect(plainAgain.body).toBe(plain.body);
    const spent = before - (await gateway.balance(accountId)).balance;
    const plainRecord = (
      await gateway.call('GET', `/v1/requests/${String(plain.headers['x-service-request-id'])}`, {
        key,
      })
    ).json<{ bill: { amount: number } }>();
    expect(spent).toBe(charged + plainRecord.bill.amount);

    // The same key with another body is a conflict, in Anthropic's shape.
    const conflict = await gateway.call('POST', '/v1/messages', {
      key,
      idempotencyKey: plainKey,
      body: { ...plainBody, max_tokens: 99 },
    });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error' },
      request_id: expect.stringMatching(/^req_/) as unknown,
    });
  });
});
