import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { png } from '../../server/test/helpers/media.js';
import {
  InsufficientFundsError,
  InternalServerError,
  OutcomeUnknownError,
  SettlementNotAllowedError,
  TollgateError,
  type ChatCompletionChunk,
  type Stream,
} from '../src/index.js';
import { clientFor, liveGateway, testConfig, type TestGateway } from './helpers/gateway.js';

/*
 * The risks: a stream that broke or carried an error event is taken for a complete answer; an
 * early break leaves the request running; a result awaiting funds is lost, or settled twice;
 * uploads buffer whole files; a range read returns the wrong bytes.
 */

let gateway: TestGateway | undefined;

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

async function collect(stream: Stream<ChatCompletionChunk>): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  return text;
}

const chat = (content: string) => ({
  model: 'sim-chat',
  messages: [{ role: 'user' as const, content }],
});

describe('chat', () => {
  it('plain and streamed completions; a stream is read once', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const { key } = await gateway.account(1_000_000);
    const client = clientFor(live.baseURL, key);

    const completion = await client.chat.completions.create(chat('hello there'));
    expect(completion.choices[0]?.message.content).toBe('Simulated reply to: hello there');

    const stream = await client.chat.completions.stream(chat('hello stream'));
    expect(stream.requestId).toMatch(/^req_/);
    expect(await collect(stream)).toBe('Simulated reply to: hello stream');
    await expect(collect(stream)).rejects.toBeInstanceOf(TollgateError);
    const record = await client.requests.recover(stream.idempotencyKey);
    expect(record.status).toBe('succeeded');
    await gateway.expectLedgerClean();
  });

  it('an error event before any chunk throws its class; the record failed', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const { key } = await gateway.account(1_000_000);
    const client = clientFor(live.baseURL, key);
    const stream = await client.chat.completions.stream(chat('oops [sim:error_after=0]'));
    const error = await collect(stream).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ code: 'UPSTREAM_ERROR', requestId: stream.requestId });
    expect((await client.requests.recover(stream.idempotencyKey)).status).toBe('failed');
    await gateway.expectLedgerClean();
  });

  it('an error event after chunks (stream cut upstream) is an unknown outcome', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const { key } = await gateway.account(1_000_000);
    const client = clientFor(live.baseURL, key);
    const stream = await client.chat.completions.stream(
      chat('one two three four five [sim:cut_after=3]'),
    );
    const chunks: ChatCompletionChunk[] = [];
    const error = await (async () => {
      for await (const chunk of stream) chunks.push(chunk);
    })().catch((caught: unknown) => caught);
    expect(chunks.length).toBeGreaterThan(0);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error).toMatchObject({
      reason: 'submission_unknown',
      idempotencyKey: stream.idempotencyKey,
    });
    expect((await client.requests.recover(stream.idempotencyKey)).status).toBe(
      'submission_unknown',
    );
  });

  it('a body that ends before [DONE] is an unknown outcome', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const { key } = await gateway.account(1_000_000);
    // A transport that loses the end of every answer body.
    const client = clientFor(live.baseURL, key, {
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        const text = await response.text();
        return new Response(text.slice(0, text.indexOf('\n\n') + 2), {
          status: response.status,
          headers: response.headers,
        });
      },
    });
    const stream = await client.chat.completions.stream(chat('cut short'));
    const error = await collect(stream).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error).toMatchObject({ reason: 'stream_cut' });
    expect(await client.journal.read(stream.idempotencyKey)).toMatchObject({ state: 'unknown' });
  });

  it('breaking out of a stream early: the gateway reads it to its end and bills it once', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const { key } = await gateway.account(1_000_000);
    const client = clientFor(live.baseURL, key);
    const words = Array.from({ length: 300 }, (_, index) => `word${index}`).join(' ');
    const stream = await client.chat.completions.stream({ ...chat(words), max_tokens: 2_000 });
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      break;
    }
    // The caller left; the gateway read the stream to its end and billed what the upstream
    // measured, as if the caller had stayed (docs/chat.md, "A caller that goes away").
    const record = await client.requests.recover(stream.idempotencyKey, { wait: true });
    expect(record.status).toBe('succeeded');
    expect(record.bill?.amount).toBeGreaterThan(0);
    await gateway.expectLedgerClean();
  });
});

describe('records and settlement after top-up', () => {
  it('a result costing more than available awaits funds; settle sends nothing until canSettle, then captures once', async () => {
    const config = testConfig({
      upstreams: {
        simulator: {
          kind: 'simulator',
          timeouts: { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 1_000 },
        },
      },
    });
    const live = await liveGateway(config);
    gateway = live.gateway;
    const { key, accountId } = await gateway.account(0);
    const client = clientFor(live.baseURL, key);
    const body = { ...chat('hi [sim:extra_prompt_tokens=75]'), max_tokens: 10 };

    // Before generation: nothing recorded; the message names what the hold needs.
    const probe = await client.chat.completions.create(body).catch((caught: unknown) => caught);
    expect(probe).toBeInstanceOf(InsufficientFundsError);
    const needed = Number(/needs (\d+) micro-yuan/.exec((probe as Error).message)?.[1]);
    await gateway.admin('POST', `/admin/v1/accounts/${accountId}/topups`, {
      amount: needed,
      reference: 'hold',
    });

    // After generation: the record awaits funds.
    const after = await client.chat.completions.create(body).catch((caught: unknown) => caught);
    expect(after).toBeInstanceOf(InsufficientFundsError);
    const requestId = (after as InsufficientFundsError).requestId ?? '';
    const waiting = await client.requests.get(requestId);
    expect(waiting).toMatchObject({ status: 'awaiting_funds', canSettle: true, result: null });

    await gateway.admin('POST', `/admin/v1/accounts/${accountId}/topups`, {
      amount: waiting.bill?.amount ?? 0,
      reference: 'settle',
    });
    const settled = await client.requests.settle(requestId);
    expect(settled).toMatchObject({ status: 'succeeded', canSettle: false });
    expect(settled.result).toMatchObject({
      choices: [{ message: { content: 'Simulated reply to: hi' } }],
    });
    await expect(client.requests.settle(requestId)).rejects.toBeInstanceOf(
      SettlementNotAllowedError,
    );
    expect(await gateway.balance(accountId)).toMatchObject({ held: 0 });
    await gateway.expectLedgerClean();
  });
});

describe('assets', () => {
  it('upload from a buffer and from a stream, list, ranged download', async () => {
    const live = await liveGateway();
    gateway = live.gateway;
    const { key } = await gateway.account(1_000_000);
    const client = clientFor(live.baseURL, key);
    const picture = png(16, 16);

    const fromBuffer = await client.assets.upload(picture, {
      contentType: 'image/png',
      fileName: 'a.png',
    });
    expect(fromBuffer).toMatchObject({
      object: 'asset',
      media_type: 'image/png',
      bytes: picture.length,
      file_name: 'a.png',
    });
    const chunks = [picture.subarray(0, 10), picture.subarray(10)];
    const fromStream = await client.assets.upload(Readable.from(chunks), {
      contentType: 'image/png',
    });
    expect(fromStream.sha256).toBe(fromBuffer.sha256);

    const page = await client.assets.list({ limit: 1 });
    expect(page.data).toHaveLength(1);
    expect(page.has_more).toBe(true);
    const all: string[] = [];
    for await (const asset of client.assets.iterate(1)) all.push(asset.id);
    expect(all.sort()).toEqual([fromBuffer.id, fromStream.id].sort());

    const range = await client.assets.content(fromBuffer.id, { range: { start: 1, end: 3 } });
    expect(range.status).toBe(206);
    expect(range.contentRange).toBe(`bytes 1-3/${picture.length}`);
    expect(Buffer.from(await range.bytes()).toString('latin1')).toBe('PNG');
    const whole = await client.assets.content(fromBuffer.id);
    expect(Buffer.from(await whole.bytes()).equals(picture)).toBe(true);
  });
});
