import { randomUUID } from 'node:crypto';
import { afterEach, expect, it, vi } from 'vitest';
import { OpenAiChat } from '../../src/providers/openai-compatible/chat.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/** Short timeouts so a stalled stream ends quickly. */
const config = testConfig({
  upstreams: {
    simulator: {
      kind: 'simulator',
      timeouts: { connect_ms: 1_000, first_byte_ms: 1_000, idle_ms: 400 },
    },
  },
});

interface Parsed {
  events: unknown[];
  done: boolean;
  error: { code: string } | undefined;
  text: string;
}

function parseSse(body: string): Parsed {
  const events: unknown[] = [];
  let done = false;
  let error: { code: string } | undefined;
  let text = '';
  for (const block of body.split('\n\n')) {
    if (!block.startsWith('data: ')) continue;
    const data = block.slice(6);
    if (data === '[DONE]') {
      done = true;
      continue;
    }
    const json = JSON.parse(data) as {
      error?: { code: string };
      choices?: { delta: { content?: string } }[];
    };
    if (json.error !== undefined) error = json.error;
    else text += json.choices?.map((choice) => choice.delta.content ?? '').join('') ?? '';
    events.push(json);
  }
  return { events, done, error, text };
}

describeEachDialect('stream endings on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function stream(
    content: string,
    extra: Record<string, unknown> = {},
    idempotencyKey = randomUUID(),
  ) {
    gateway = gateway ?? (await startGateway(dialect, { config }));
    const { accountId, key } = await gateway.account(100_000_000);
    const response = await gateway.call('POST', '/v1/chat/completions', {
      key,
      idempotencyKey,
      body: {
        model: 'sim-chat',
        stream: true,
        messages: [{ role: 'user', content }],
        max_tokens: 100,
        ...extra,
      },
    });
    const requestId = String(response.headers['x-service-request-id']);
    const record = (await gateway.call('GET', `/v1/requests/${requestId}`, { key })).json<
      Record<string, unknown> & {
        bill: { amount: number; pricing_rule: string | null } | null;
        reserve: { state: string };
        error: { code: string; message: string } | null;
      }
    >();
    return {
      response,
      parsed: parseSse(response.body),
      record,
      balance: await gateway.balance(accountId),
      key,
      accountId,
    };
  }

  it('usage reported: relays every chunk as SSE, bills the usage, ends with [DONE]', async () => {
    const { response, parsed, record, balance } = await stream('tell me a short story');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/event-stream');
    expect(parsed.done).toBe(true);
    expect(parsed.text).toBe('Simulated reply to: tell me a short story');
    expect(parsed.events.some((event) => (event as { usage?: unknown }).usage !== undefined)).toBe(
      false,
    );
    expect(record).toMatchObject({ status: 'succeeded', reserve: { state: 'captured' } });
    expect(record.bill?.pricing_rule).toContain('stream completed with usage');
    expect(record['bill']).toMatchObject({ captured: true });
    expect(balance.balance).toBe(100_000_000 - (record.bill?.amount ?? 0));
    expect(balance.held).toBe(0);
  });

  it('passes the usage chunk on only when the caller asked for it', async () => {
    const { parsed } = await stream('count my tokens', { stream_options: { include_usage: true } });
    const usageChunk = parsed.events.find(
      (event) => (event as { choices: unknown[] }).choices.length === 0,
    ) as { usage: { prompt_tokens: number } } | undefined;
    expect(usageChunk?.usage.prompt_tokens).toBeGreaterThan(0);
    expect(parsed.done).toBe(true);
  });

  it('upstream error status before the first byte: a JSON error, hold released, nothing charged', async () => {
    const { response, record, balance } = await stream('fail now [sim:fail=500]');
    expect(response.statusCode).toBe(502);
    expect(response.headers['content-type']).toContain('application/json');
    expect(record).toMatchObject({ status: 'failed', reserve: { state: 'released' } });
    expect(balance).toEqual({ balance: 100_000_000, held: 0, available: 100_000_000 });
  });

  it('stream cut after k chunks: final error event, record submission_unknown with its hold', async () => {
    const { response, parsed, record, balance } = await stream(
      'one two three four five six [sim:cut_after=3]',
    );
    expect(response.statusCode).toBe(200);
    expect(parsed.done).toBe(false);
    expect(parsed.error).toMatchObject({
      code: 'UPSTREAM_ERROR',
      request_id: response.headers['x-service-request-id'],
    });
    expect(parsed.events.length).toBe(4);
    expect(record).toMatchObject({
      status: 'submission_unknown',
      reserve: { state: 'open' },
      bill: null,
    });
    expect(record.error?.message).toContain('broke in the middle of the stream');
    // The operator resolving it sees which ending it was, with its detail.
    const operatorView = await gateway?.admin('GET', `/admin/v1/requests/${String(record['id'])}`);
    expect(String(operatorView?.['ending_rule'])).toMatch(/^stream dropped .* after 3 chunk\(s\)/);
    expect(balance.held).toBeGreaterThan(0);
    await gateway?.admin('POST', `/admin/v1/requests/${String(record['id'])}/resolve`, {
      action: 'release',
      reason: 'test cleanup',
    });
  });

  it('upstream stalls mid-stream past idle_ms: final UPSTREAM_TIMEOUT event, submission_unknown', async () => {
    const { parsed, record, balance } = await stream(
      'slow words here and there [sim:stall_after=3]',
    );
    expect(parsed.events.length).toBe(4);
    expect(parsed.done).toBe(false);
    expect(parsed.error).toMatchObject({ code: 'UPSTREAM_TIMEOUT' });
    expect(record).toMatchObject({ status: 'submission_unknown', reserve: { state: 'open' } });
    expect(record).not.toHaveProperty('rule');
    expect(record.bill).toBeNull();
    expect(record.error).toMatchObject({ code: 'UPSTREAM_TIMEOUT' });
    expect(balance.held).toBeGreaterThan(0);
    await gateway?.admin('POST', `/admin/v1/requests/${String(record['id'])}/resolve`, {
      action: 'release',
      reason: 'test cleanup',
    });
  });

  it('upstream error event after k chunks: final error event, submission_unknown', async () => {
    const { parsed, record } = await stream('one two three four [sim:error_after=3]');
    expect(parsed.events.length).toBe(4);
    expect(parsed.error).toMatchObject({ code: 'UPSTREAM_ERROR' });
    expect(record).toMatchObject({ status: 'submission_unknown', reserve: { state: 'open' } });
    expect(record.error?.message).toContain('the upstream failed in the middle of the stream');
    await gateway?.admin('POST', `/admin/v1/requests/${String(record['id'])}/resolve`, {
      action: 'capture',
      amount: 1,
      reason: 'provider billed the partial output',
    });
  });

  it('upstream error event before any chunk: error event, failed, hold released', async () => {
    const { parsed, record, balance } = await stream('nothing at all [sim:error_after=0]');
    expect(parsed.events).toHaveLength(1);
    expect(parsed.error).toMatchObject({ code: 'UPSTREAM_ERROR' });
    expect(record).toMatchObject({ status: 'failed', reserve: { state: 'released' } });
    expect(balance).toEqual({ balance: 100_000_000, held: 0, available: 100_000_000 });
  });

  it('stream finished without usage: billed on the documented estimate, flagged, never at the hold', async () => {
    const idempotencyKey = randomUUID();
    const { parsed, record, balance, key } = await stream(
      'no meter here [sim:no_usage]',
      { stream_options: { include_usage: true } },
      idempotencyKey,
    );
    expect(parsed.text).toBe('Simulated reply to: no meter here');
    expect(parsed.done).toBe(true);
    expect(parsed.error).toBeUndefined();
    // Worked by hand (docs/billing.md, "A stream that ends without usage"): the prompt is 28
    // bytes, ceil(28 / 3) + 8 for its one message = 18 input tokens; the answer is 33 bytes,
    // ceil(33 / 3) = 11 output tokens; 18 x 2 + 11 x 8 = 124 micro-yuan.
    expect(record).toMatchObject({
      status: 'succeeded',
      reserve: { state: 'captured' },
      usage: { prompt_tokens: 18, completion_tokens: 11 },
      bill: { amount: 124 },
      usage_exceeded_cap: null,
    });
    expect(record.bill?.pricing_rule).toContain('counted by the gateway');
    const note = record['usage_counted_locally'] as { detail: string; reviewed_at: unknown };
    expect(note.detail).toMatch(/^usage_counted_locally: .*input 18 tokens.*output 11 tokens/);
    expect(note.reviewed_at).toBeNull();
    expect(balance).toEqual({ balance: 100_000_000 - 124, held: 0, available: 100_000_000 - 124 });
    // The caller asked for usage: the last chunk carries the counted usage, as billed.
    const usageChunk = parsed.events.find(
      (event) => (event as { usage?: unknown }).usage != null,
    ) as { usage: { prompt_tokens: number; completion_tokens: number } } | undefined;
    expect(usageChunk?.usage).toMatchObject({ prompt_tokens: 18, completion_tokens: 11 });
    // A replay sends the same stream and charges nothing more.
    const replay = await gateway?.call('POST', '/v1/chat/completions', {
      key,
      idempotencyKey,
      body: {
        model: 'sim-chat',
        stream: true,
        messages: [{ role: 'user', content: 'no meter here [sim:no_usage]' }],
        max_tokens: 100,
        stream_options: { include_usage: true },
      },
    });
    expect(replay?.headers['idempotent-replayed']).toBe('true');
    expect(parseSse(replay?.body ?? '').text).toBe(parsed.text);
    // The operator's review queue lists it with the usage beyond the cap.
    const queue = await gateway?.admin('GET', '/admin/v1/requests?usage_exceeded_cap=unreviewed');
    expect(JSON.stringify(queue)).toContain(String(record['id']));
  });

  it('stream finished without usage past the output cap: output counted at most at the cap sent', async () => {
    const { parsed, record } = await stream('no meter here either [sim:no_usage]', {
      max_tokens: 3,
    });
    expect(parsed.done).toBe(true);
    // 3 simulator tokens of text are more than 9 bytes: the count is cut to the cap, 3.
    expect(record).toMatchObject({
      status: 'succeeded',
      usage: { completion_tokens: 3 },
      usage_exceeded_cap: null,
    });
    expect((record['usage_counted_locally'] as { detail: string }).detail).toContain(
      'cut to the output cap 3',
    );
  });

  it('upstream hangs before the first byte: 504 JSON error, submission_unknown', async () => {
    const { response, record } = await stream('wait forever [sim:hang]');
    expect(response.statusCode).toBe(504);
    expect(response.json()).toMatchObject({ error: { code: 'UPSTREAM_TIMEOUT' } });
    expect(record).toMatchObject({ status: 'submission_unknown', reserve: { state: 'open' } });
    await gateway?.admin('POST', `/admin/v1/requests/${String(record['id'])}/resolve`, {
      action: 'release',
      reason: 'test cleanup',
    });
  });

  it('usage above the hold mid-stream: text delivered, record awaiting funds, settle later', async () => {
    gateway = await startGateway(dialect, { config });
    const small = await gateway.account(0);
    const body = {
      model: 'sim-chat',
      stream: true,
      max_tokens: 10,
      // Prompt tokens above the hold's estimate, within the credible bound (twice it).
      messages: [{ role: 'user', content: 'hi [sim:extra_prompt_tokens=75]' }],
    };
    // Fund exactly the hold this request takes.
    const probe = await gateway.call('POST', '/v1/chat/completions', { key: small.key, body });
    expect(probe.statusCode).toBe(402);
    const needed = Number(
      /needs (\d+) micro-yuan/.exec(
        probe.json<{ error: { message: string } }>().error.message,
      )?.[1],
    );
    await gateway.admin('POST', `/admin/v1/accounts/${small.accountId}/topups`, {
      amount: needed,
      reference: 'exact',
    });
    const response = await gateway.call('POST', '/v1/chat/completions', { key: small.key, body });
    const parsed = parseSse(response.body);
    expect(parsed.text).toBe('Simulated reply to: hi');
    expect(parsed.error).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    const requestId = String(response.headers['x-service-request-id']);
    const record = (
      await gateway.call('GET', `/v1/requests/${requestId}`, { key: small.key })
    ).json<{ status: string; canSettle: boolean; bill: { amount: number } }>();
    expect(record).toMatchObject({ status: 'awaiting_funds', canSettle: true });
    await gateway.admin('POST', `/admin/v1/accounts/${small.accountId}/topups`, {
      amount: record.bill.amount,
      reference: 'settle',
    });
    const settled = await gateway.call('POST', `/v1/requests/${requestId}/settle`, {
      key: small.key,
    });
    expect(settled.json()).toMatchObject({
      status: 'succeeded',
      result: { choices: [{ message: { content: 'Simulated reply to: hi' } }] },
    });
  });

  it('a client disconnect does not stop the work: the upstream is read to its end and billed, nothing held', async () => {
    gateway = await startGateway(dialect, { config });
    const { accountId, key } = await gateway.account(100_000_000);
    const base = await gateway.listen();
    const abort = new AbortController();
    const response = await fetch(`${base}/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'idempotency-key': randomUUID(),
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        model: 'sim-chat',
        stream: true,
        messages: [{ role: 'user', content: `${'many words '.repeat(400)}` }],
        max_tokens: 2000,
      }),
      signal: abort.signal,
    });
    const requestId = String(response.headers.get('x-service-request-id'));
    const reader = response.body?.getReader();
    await reader?.read();
    abort.abort();
    let record: { status: string; bill?: { amount: number; captured: boolean } } = {
      status: 'processing',
    };
    for (let attempt = 0; attempt < 100 && record.status === 'processing'; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      record = (await gateway.call('GET', `/v1/requests/${requestId}`, { key })).json();
    }
    expect(record).toMatchObject({ status: 'succeeded', bill: { captured: true } });
    const amount = record.bill?.amount ?? 0;
    expect(amount).toBeGreaterThan(0);
    expect(await gateway.balance(accountId)).toEqual({
      balance: 100_000_000 - amount,
      held: 0,
      available: 100_000_000 - amount,
    });
  });

  it('sends a duplicate streamed request upstream once and replays the stored transcript', async () => {
    const upstreamCalls = vi.spyOn(OpenAiChat.prototype, 'stream');
    const idempotencyKey = randomUUID();
    const first = await stream('replay me please', {}, idempotencyKey);
    const key = first.key;
    const replay = await gateway?.call('POST', '/v1/chat/completions', {
      key,
      idempotencyKey,
      body: {
        model: 'sim-chat',
        stream: true,
        messages: [{ role: 'user', content: 'replay me please' }],
        max_tokens: 100,
      },
    });
    expect(replay?.headers['idempotent-replayed']).toBe('true');
    expect(replay?.headers['content-type']).toContain('text/event-stream');
    expect(replay?.body).toBe(first.response.body);
    expect(upstreamCalls).toHaveBeenCalledTimes(1);
  });
});
