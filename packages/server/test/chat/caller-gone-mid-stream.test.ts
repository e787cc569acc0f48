import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/default-config.js';
import type { ConfigFile } from '../../src/config/schema.js';
import { startSimulator, type Simulator } from '../../src/simulator/server.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/**
 * A loopback upstream in front of the simulator that passes its SSE events on one by one and,
 * when told, holds them after `pauseAfter` events until `release()`: a caller can then go away
 * at a known chunk while the upstream stream is still there. An answer the simulator breaks off
 * (`[sim:cut_after=N]`) is broken off here too, after what came before it.
 */
interface GatedFront {
  readonly url: string;
  pauseAfter: number | undefined;
  release(): void;
  /** Answers the gateway closed before they ended (it stopped reading them). */
  closedEarly: number;
  /** Answers sent whole, to their end. */
  completed: number;
  close(): Promise<void>;
}

async function startGatedFront(target: string): Promise<GatedFront> {
  const sockets = new Set<Socket>();
  let open = () => {};
  let gate = Promise.resolve();
  const front: GatedFront = {
    url: '',
    pauseAfter: undefined,
    release: () => open(),
    closedEarly: 0,
    completed: 0,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((request, response) => {
    const pauseAfter = front.pauseAfter;
    if (pauseAfter !== undefined) gate = new Promise((resolve) => (open = resolve));
    const upstream = http.request(
      `${target}${request.url ?? ''}`,
      { method: request.method, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        let buffered = '';
        let sent = 0;
        let chain = Promise.resolve();
        const pass = (block: string) => {
          const index = sent;
          sent += 1;
          chain = chain.then(async () => {
            if (pauseAfter !== undefined && index >= pauseAfter) await gate;
            if (!response.destroyed) response.write(block);
          });
        };
        answer.on('data', (bytes: Buffer) => {
          buffered += bytes.toString('utf8');
          for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
            pass(buffered.slice(0, end + 2));
            buffered = buffered.slice(end + 2);
          }
        });
        answer.on('end', () => {
          chain = chain.then(() => {
            front.completed += 1;
            response.end();
          });
        });
        answer.on('aborted', () => {
          chain = chain.then(() => void response.destroy());
        });
      },
    );
    upstream.on('error', () => response.destroy());
    response.on('close', () => {
      if (!response.writableFinished) front.closedEarly += 1;
    });
    request.pipe(upstream);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(front, { url: `http://127.0.0.1:${port}/v1` });
}

/**
 * An upstream that never stops: a content chunk every few milliseconds, never `[DONE]`. Counts
 * the chunks it wrote and whether the gateway closed it.
 */
async function startEndlessUpstream() {
  const state = { chunks: 0, closed: false };
  const server = http.createServer((request, response) => {
    request.resume();
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const timer = setInterval(() => {
      state.chunks += 1;
      response.write(
        `data: ${JSON.stringify({
          id: 'x',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'sim-chat',
          choices: [{ index: 0, delta: { content: 'more ' }, finish_reason: null }],
        })}\n\n`,
      );
    }, 3);
    response.on('close', () => {
      clearInterval(timer);
      state.closed = true;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    state,
    url: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const timeouts = { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 3_000 };

/** `sim-chat`, served by `upstream`. */
function chatOn(upstream: string): ConfigFile['models'][number] {
  const base = defaultConfig.models.find((model) => model.id === 'sim-chat');
  if (base === undefined) throw new Error('no default sim-chat');
  return { ...base, upstream };
}

interface RecordView {
  status: string;
  reserve: { state: string };
  bill: { amount: number; captured: boolean; pricing_rule: string | null } | null;
  error: { code: string; message: string } | null;
}

/** The text and `[DONE]` of an SSE body. */
function readSse(body: string): { text: string; done: boolean; chunks: number } {
  let text = '';
  let done = false;
  let chunks = 0;
  for (const block of body.split('\n\n')) {
    if (!block.startsWith('data: ')) continue;
    const data = block.slice(6);
    if (data === '[DONE]') {
      done = true;
      continue;
    }
    const json = JSON.parse(data) as { choices?: { delta: { content?: string } }[] };
    chunks += 1;
    text += json.choices?.map((choice) => choice.delta.content ?? '').join('') ?? '';
  }
  return { text, done, chunks };
}

/**
 * The risk: a caller that goes away in the middle of a stream (Ctrl-C, a closed tab, a client's
 * timeout) turned its record into `submission_unknown` with its hold waiting for an operator,
 * although the upstream's stream was still there. Now the upstream is read to its end and the
 * record is billed exactly as for a caller that stayed, its answer kept for a replay by key;
 * only an upstream that itself fails leaves the outcome unknown, and reading for nobody is
 * bounded by the request's output cap (and the idle timeout) and by the gateway's shutdown.
 * OpenAI-compatible streaming is the one chat dialect (providers/registry.ts).
 */
describeEachDialect('a caller that goes away mid-stream on $name', (dialect) => {
  let simulator: Simulator;
  let front: GatedFront;
  let endless: Awaited<ReturnType<typeof startEndlessUpstream>>;
  let gateway: TestGateway;
  let base: string;

  beforeAll(async () => {
    simulator = await startSimulator();
    front = await startGatedFront(simulator.url.replace(/\/$/, ''));
    endless = await startEndlessUpstream();
    gateway = await startGateway(dialect, {
      config: testConfig({
        upstreams: {
          gated: { kind: 'openai', base_url: front.url, timeouts },
          endless: { kind: 'openai', base_url: endless.url, timeouts },
        },
        models: [chatOn('gated'), { ...chatOn('endless'), id: 'endless-chat' }],
      }),
    });
    base = await gateway.listen();
  });
  afterEach(async () => {
    front.pauseAfter = undefined;
    front.release();
    await gateway.expectLedgerClean();
  });
  afterAll(async () => {
    await gateway.close();
    await front.close();
    await endless.close();
    await simulator.close();
  });

  const body = (content: string, model = 'sim-chat') => ({
    model,
    stream: true,
    max_tokens: 60,
    messages: [{ role: 'user', content }],
  });

  /**
   * Streams over real HTTP, reads `chunks` data events, then goes away: the socket is destroyed.
   * Plain `node:http` with an agent of its own, so that the caller's leaving is this socket's
   * closing whatever else the test process has loaded (with test files sharing a process, the
   * global fetch may run on another file's dispatcher, which need not close the socket on abort).
   */
  async function leaveAfter(
    key: string,
    idempotencyKey: string,
    payload: object,
    chunks: number,
    target: { gateway: TestGateway; base: string } = { gateway, base },
  ) {
    const agent = new http.Agent({ keepAlive: false });
    const request = http.request(`${target.base}/chat/completions`, {
      method: 'POST',
      agent,
      headers: {
        authorization: `Bearer ${key}`,
        'idempotency-key': idempotencyKey,
        'content-type': 'application/json',
      },
    });
    request.end(JSON.stringify(payload));
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      request.once('response', resolve);
      request.once('error', reject);
    });
    expect(response.statusCode).toBe(200);
    const requestId = String(response.headers['x-service-request-id']);
    let received = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (bytes: Buffer) => {
        received += bytes.toString('utf8');
        if ((received.match(/^data: /gm) ?? []).length < chunks) return;
        response.off('data', onData);
        resolve();
      };
      response.on('data', onData);
      response.once('end', () => reject(new Error('the stream ended before the caller went away')));
    });
    request.destroy();
    agent.destroy();
    // The gateway has seen the caller go: no connection of it is left.
    for (let waited = 0; (await connections(target.gateway)) > 0; waited += 20) {
      if (waited > 3_000) throw new Error('the caller connection never closed');
      await delay(20);
    }
    return requestId;
  }

  function connections(of: TestGateway): Promise<number> {
    return new Promise((resolve) =>
      of.app.server.getConnections((_error, count) => resolve(count)),
    );
  }

  async function settled(key: string, requestId: string, of = gateway): Promise<RecordView> {
    let record: RecordView = { status: 'processing' } as RecordView;
    for (let attempt = 0; attempt < 200 && record.status === 'processing'; attempt += 1) {
      await delay(25);
      record = (await of.call('GET', `/v1/requests/${requestId}`, { key })).json();
    }
    return record;
  }

  it('after 3 chunks: the upstream is read to its end, billed exactly as if the caller stayed, nothing held, the answer replayed by its key', async () => {
    const content = 'tell me about the quiet river under the old stone bridge';
    // The same request, its caller staying to the end: the bill to match.
    const stayer = await gateway.account(100_000_000);
    const stayed = await gateway.call('POST', '/v1/chat/completions', {
      key: stayer.key,
      body: body(content),
    });
    const stayedRecord: RecordView = (
      await gateway.call('GET', `/v1/requests/${String(stayed.headers['x-service-request-id'])}`, {
        key: stayer.key,
      })
    ).json();
    expect(stayedRecord.status).toBe('succeeded');
    const whole = readSse(stayed.body);

    const leaver = await gateway.account(100_000_000);
    const idempotencyKey = randomUUID();
    front.pauseAfter = 3;
    const completedBefore = front.completed;
    const requestId = await leaveAfter(leaver.key, idempotencyKey, body(content), 3);
    front.release();
    const record = await settled(leaver.key, requestId);
    expect(record).toMatchObject({
      status: 'succeeded',
      reserve: { state: 'captured' },
      bill: { amount: stayedRecord.bill?.amount, captured: true },
    });
    expect(record.bill?.pricing_rule).toContain('stream completed with usage');
    expect(await gateway.balance(leaver.accountId)).toEqual({
      balance: 100_000_000 - (stayedRecord.bill?.amount ?? -1),
      held: 0,
      available: 100_000_000 - (stayedRecord.bill?.amount ?? -1),
    });
    // The upstream's answer was read whole: never cut by the gateway.
    expect(front.completed).toBe(completedBefore + 1);

    // The answer is kept for a replay by key, whole, as a completed stream's is.
    const replay = await gateway.call('POST', '/v1/chat/completions', {
      key: leaver.key,
      idempotencyKey,
      body: body(content),
    });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['x-service-request-id']).toBe(requestId);
    expect(readSse(replay.body)).toEqual(whole);
  });

  it('the key keeps its in-flight slot while its stream is read for nobody, and gets it back when the stream ends (never leaked)', async () => {
    // One request in flight per key: a stream read for a caller that left still counts.
    const limited = await startGateway(dialect, {
      config: testConfig({
        upstreams: { gated: { kind: 'openai', base_url: front.url, timeouts } },
        models: [chatOn('gated')],
        limits: { body_bytes: 1_000_000, requests_per_minute: 100_000, concurrent_requests: 1 },
      }),
    });
    try {
      const target = { gateway: limited, base: await limited.listen() };
      const { key } = await limited.account(100_000_000);
      front.pauseAfter = 2;
      const requestId = await leaveAfter(key, randomUUID(), body('keep my place'), 2, target);
      // The caller has gone; its stream is still read: the key's one slot is still taken.
      const meanwhile = await limited.call('GET', `/v1/requests/${requestId}`, { key });
      expect(meanwhile.statusCode).toBe(429);
      front.pauseAfter = undefined;
      front.release();
      for (let waited = 0; limited.services.streamsInFlight.count > 0; waited += 20) {
        if (waited > 3_000) throw new Error('the stream was never finished');
        await delay(20);
      }
      // The slot came back when the stream ended: the key is served again (it used to leak, as
      // the answer to a caller who left never finishes, and the key was refused from then on).
      expect((await settled(key, requestId, limited)).status).toBe('succeeded');
      await limited.expectLedgerClean();
    } finally {
      await limited.close();
    }
  });

  it('then the upstream breaks off: the outcome is unknown, its hold kept, as before', async () => {
    const { accountId, key } = await gateway.account(100_000_000);
    front.pauseAfter = 2;
    const requestId = await leaveAfter(
      key,
      randomUUID(),
      body('one two three four five six seven [sim:cut_after=5]'),
      2,
    );
    front.release();
    const record = await settled(key, requestId);
    expect(record).toMatchObject({ status: 'submission_unknown', reserve: { state: 'open' } });
    expect(record.error?.message).toContain('broke in the middle of the stream');
    expect((await gateway.balance(accountId)).held).toBeGreaterThan(0);
    await gateway.admin('POST', `/admin/v1/requests/${requestId}/resolve`, {
      action: 'release',
      reason: 'test cleanup',
    });
  });

  it('an upstream that never stops is read for nobody only up to the output cap', async () => {
    const { key } = await gateway.account(100_000_000);
    const payload = { ...body('go on forever', 'endless-chat'), max_tokens: 20 };
    const requestId = await leaveAfter(key, randomUUID(), payload, 2);
    const record = await settled(key, requestId);
    expect(record).toMatchObject({ status: 'submission_unknown', reserve: { state: 'open' } });
    // 20 output tokens + 16 chunks of slack, then the gateway stopped reading and hung up.
    expect(record.error?.message).toContain('past the 36 chunks');
    for (let waited = 0; !endless.state.closed; waited += 20) {
      if (waited > 3_000) throw new Error('the gateway never hung up on the endless upstream');
      await delay(20);
    }
    const written = endless.state.chunks;
    await delay(100);
    expect(endless.state.chunks).toBe(written);
    await gateway.admin('POST', `/admin/v1/requests/${requestId}/resolve`, {
      action: 'release',
      reason: 'test cleanup',
    });
  });

  it('closing the gateway waits for a stream read for a caller that went away; a cut one is unknown', async () => {
    const { key } = await gateway.account(100_000_000);
    front.pauseAfter = 2;
    const requestId = await leaveAfter(key, randomUUID(), body('wait for me to finish'), 2);
    expect(gateway.services.streamsInFlight.count).toBe(1);
    let drained = false;
    const draining = gateway.services.streamsInFlight.drained().then(() => (drained = true));
    await delay(100);
    expect(drained).toBe(false);
    front.release();
    await draining;
    expect((await settled(key, requestId)).status).toBe('succeeded');

    // A shutdown whose grace ran out stops the reading: the outcome is unknown, hold kept.
    front.pauseAfter = 2;
    const cutId = await leaveAfter(key, randomUUID(), body('cut me off please'), 2);
    expect(gateway.services.streamsInFlight.cut()).toBe(1);
    const cut = await settled(key, cutId);
    expect(cut).toMatchObject({ status: 'submission_unknown', reserve: { state: 'open' } });
    expect(cut.error?.message).toContain('shut down');
    await gateway.admin('POST', `/admin/v1/requests/${cutId}/resolve`, {
      action: 'release',
      reason: 'test cleanup',
    });
  });
});
