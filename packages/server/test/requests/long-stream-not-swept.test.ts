import pino from 'pino';
import { afterEach, expect, it, vi } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { startSweeper, staleAfterMs } from '../../src/maintenance/sweeper.js';
import { OpenAiChat, type StreamEvent } from '../../src/providers/openai-compatible/chat.js';
import { describeEachDialect } from '../helpers/dialects.js';
import { manualClock, startGateway, testConfig, type TestGateway } from '../helpers/gateway.js';

/**
 * The sweeper takes a `processing` record older than its stale age for one left by a dead
 * instance and marks it `submission_unknown`. A stream has no total time limit, so one that is
 * still relaying must show it is alive (a heartbeat on its record) and never be swept; one that
 * shows nothing for the stale age is swept, and if it finishes after all, its confirmed outcome
 * reconciles the record.
 */

// Short timeouts, so the stale age is short: 2 x (queue 1 s + connect, first byte, idle 1 s).
const config = testConfig({
  upstreams: {
    simulator: {
      kind: 'simulator',
      queue_timeout_ms: 1_000,
      timeouts: { connect_ms: 1_000, first_byte_ms: 1_000, idle_ms: 1_000 },
    },
  },
});
const staleAge = staleAfterMs(parseConfig(config, 'test'));

/** An upstream stream the test feeds one event at a time. */
class FedStream {
  private readonly queued: StreamEvent[] = [];
  private taker: ((event: StreamEvent) => void) | undefined;
  private onWaiting: (() => void) | undefined;

  push(event: StreamEvent): void {
    const taker = this.taker;
    this.taker = undefined;
    if (taker === undefined) this.queued.push(event);
    else taker(event);
  }

  /** Resolves once the gateway has handled every event pushed so far and asks for the next. */
  waitingForNext(): Promise<void> {
    if (this.taker !== undefined) return Promise.resolve();
    return new Promise((resolve) => (this.onWaiting = resolve));
  }

  async *events(): AsyncGenerator<StreamEvent> {
    for (;;) {
      const next =
        this.queued.shift() ??
        (await new Promise<StreamEvent>((resolve) => {
          this.taker = resolve;
          this.onWaiting?.();
          this.onWaiting = undefined;
        }));
      yield next;
      if (next.kind !== 'chunk') return;
    }
  }
}

const text = (content: string): StreamEvent => ({
  kind: 'chunk',
  chunk: { choices: [{ index: 0, delta: { content }, finish_reason: null }] },
});
const usage: StreamEvent = {
  kind: 'chunk',
  chunk: { choices: [], usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 } },
};

describeEachDialect('long streams and the stale-record sweeper on $name', (dialect) => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await gateway?.expectLedgerClean();
    await gateway?.close();
    gateway = undefined;
  });

  async function startStream() {
    const clock = manualClock();
    const gw = await startGateway(dialect, { clock, config });
    gateway = gw;
    const upstream = new FedStream();
    vi.spyOn(OpenAiChat.prototype, 'stream').mockResolvedValue({
      events: upstream.events(),
      upstreamRequestId: 'up-stream',
    });
    const { accountId, key } = await gw.account(100_000_000);
    const response = gw.call('POST', '/v1/chat/completions', {
      key,
      body: {
        model: 'sim-chat',
        stream: true,
        messages: [{ role: 'user', content: 'a long answer, please' }],
        max_tokens: 100,
      },
    });
    await upstream.waitingForNext();
    const [running] = await gw.services.store.db
      .selectFrom('requests')
      .select('id')
      .where('status', '=', 'processing')
      .execute();
    if (running === undefined) throw new Error('the stream has no record');
    const sweep = async () => {
      const sweeper = startSweeper(gw.services, {
        config: gw.services.config,
        logger: pino({ level: 'silent' }),
        intervalMs: 3_600_000,
      });
      await sweeper.first;
      sweeper.stop();
      const row = await gw.services.requests.records.byId(running.id);
      return row?.status;
    };
    return { gw, clock, upstream, response, accountId, key, requestId: running.id, sweep };
  }

  it('does not sweep a stream that keeps relaying for longer than the stale age', async () => {
    const { gw, clock, upstream, response, accountId, requestId, sweep } = await startStream();
    // Four gaps of 0.6 stale ages each: 2.4 stale ages in all, a chunk after each gap.
    for (let gap = 0; gap < 4; gap += 1) {
      clock.advance(Math.floor(staleAge * 0.6));
      expect(await sweep()).toBe('processing');
      upstream.push(text(`part ${gap} `));
      await upstream.waitingForNext();
    }
    upstream.push(usage);
    upstream.push({ kind: 'done' });
    const finished = await response;
    expect(finished.statusCode).toBe(200);
    expect(finished.body).toContain('data: [DONE]');
    const record = await gw.services.requests.records.byId(requestId);
    expect(record).toMatchObject({ status: 'succeeded', hold_state: 'captured' });
    const { balance, held } = await gw.balance(accountId);
    expect(held).toBe(0);
    expect(balance).toBe(100_000_000 - (record?.amount ?? Number.NaN));
  });

  it('sweeps a stream that shows no sign of life for the stale age; its late end reconciles it', async () => {
    const { gw, clock, upstream, response, accountId, key, requestId, sweep } = await startStream();
    upstream.push(text('the first part '));
    await upstream.waitingForNext();
    clock.advance(staleAge + 1);
    expect(await sweep()).toBe('submission_unknown');
    const swept = (await gw.call('GET', `/v1/requests/${requestId}`, { key })).json();
    expect(swept).toMatchObject({ status: 'submission_unknown', reserve: { state: 'open' } });

    // The stream was alive after all: its confirmed, priced end is recorded with its capture.
    upstream.push(usage);
    upstream.push({ kind: 'done' });
    const finished = await response;
    expect(finished.body).toContain('data: [DONE]');
    const record = (await gw.call('GET', `/v1/requests/${requestId}`, { key })).json();
    expect(record).toMatchObject({
      status: 'succeeded',
      reserve: { state: 'captured' },
      bill: { captured: true },
      upstream_request_id: 'up-stream',
    });
    const { balance, held } = await gw.balance(accountId);
    expect(held).toBe(0);
    expect(balance).toBe(100_000_000 - (record as { bill: { amount: number } }).bill.amount);
  });
});
