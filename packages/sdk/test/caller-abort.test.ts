import { afterEach, describe, expect, it } from 'vitest';
import {
  AbortedError,
  NotFoundError,
  OutcomeUnknownError,
  TollgateError,
  MemoryJournal,
  type ChatCompletionParams,
  type JournalEntry,
  type TollgateOptions,
} from '../src/index.js';
import {
  clientFor,
  eventually,
  liveGateway,
  testConfig,
  type TestGateway,
} from './helpers/gateway.js';

/*
 * The risks: a call the caller aborts with its own AbortSignal surfaces a raw DOMException (or a
 * generic error) that carries no idempotency key, so a caller who aborted a paid request cannot
 * tell whether it ran or read it back. (The gateway itself reads a stream on to its end after
 * its caller left, and bills it as if the caller had stayed: docs/chat.md, "A caller that goes
 * away".)
 */

let gateway: TestGateway | undefined;

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

const chat = (content: string): ChatCompletionParams => ({
  model: 'sim-chat',
  messages: [{ role: 'user', content }],
});

async function liveClient(
  options: Partial<TollgateOptions> = {},
  config?: Parameters<typeof liveGateway>[0],
) {
  const live = await liveGateway(config);
  gateway = live.gateway;
  const { key } = await gateway.account(1_000_000);
  return clientFor(live.baseURL, key, options);
}

describe('a call the caller aborts', () => {
  it('a plain call in flight raises AbortedError with its key, readable back', async () => {
    const client = await liveClient();
    const controller = new AbortController();
    const idempotencyKey = crypto.randomUUID();
    const call = client.chat.completions
      .create(chat('slow [sim:delay=3000]'), { idempotencyKey, signal: controller.signal })
      .catch((caught: unknown) => caught);
    // Abort once the gateway has the request (its record is processing).
    await eventually(async () =>
      client.requests.getByIdempotencyKey(idempotencyKey).then(
        (record) => record.status === 'processing',
        () => false,
      ),
    );
    controller.abort();
    const error = await call;

    expect(error).toBeInstanceOf(AbortedError);
    expect(error).toBeInstanceOf(TollgateError);
    expect(error).not.toBeInstanceOf(DOMException);
    expect(error).toMatchObject({ idempotencyKey, outcomeUnknown: true });
    expect((error as Error).message).toContain(`requests.recover('${idempotencyKey}')`);
    expect(await client.journal.read(idempotencyKey)).toMatchObject({ state: 'unknown' });
    // The gateway finishes (and bills) what it was sent: the key reads it back, nothing is resent.
    const record = await client.requests.recover(idempotencyKey, { wait: true });
    expect(record).toMatchObject({ idempotency_key: idempotencyKey, status: 'succeeded' });
    await gateway?.expectLedgerClean();
  });

  it('a stream aborted between chunks raises AbortedError at once, with its ids', async () => {
    // The gateway reads a stalled stream on after its caller left, until the upstream's idle
    // timeout: a short one, so that closing the gateway after the test does not wait long.
    const client = await liveClient(
      {},
      testConfig({
        upstreams: {
          simulator: {
            kind: 'simulator',
            timeouts: { connect_ms: 1_000, first_byte_ms: 2_000, idle_ms: 1_000 },
          },
        },
      }),
    );
    const controller = new AbortController();
    // The stream stalls after two chunks: only the caller's abort ends the caller's side.
    const stream = await client.chat.completions.stream(chat('a b c d e f [sim:stall_after=2]'), {
      signal: controller.signal,
    });
    let chunks = 0;
    const error = await (async () => {
      for await (const chunk of stream) {
        void chunk;
        chunks += 1;
        if (chunks === 2) controller.abort();
      }
    })().catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(AbortedError);
    expect(error).not.toBeInstanceOf(OutcomeUnknownError);
    expect(error).toMatchObject({
      idempotencyKey: stream.idempotencyKey,
      requestId: stream.requestId,
      outcomeUnknown: true,
    });
    expect(await client.journal.read(stream.idempotencyKey)).toMatchObject({ state: 'unknown' });
    const record = await client.requests.recover(stream.idempotencyKey);
    expect(record.id).toBe(stream.requestId);
  });

  it('aborted before it is sent: AbortedError, nothing recorded; a read too', async () => {
    const client = await liveClient();
    const idempotencyKey = crypto.randomUUID();
    const signal = AbortSignal.abort();

    const error = await client.chat.completions
      .create(chat('never sent'), { idempotencyKey, signal })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AbortedError);
    expect(error).toMatchObject({ outcomeUnknown: false });
    await expect(client.requests.getByIdempotencyKey(idempotencyKey)).rejects.toBeInstanceOf(
      NotFoundError,
    );

    const read = await client.account.get({ signal }).catch((caught: unknown) => caught);
    expect(read).toBeInstanceOf(AbortedError);
    expect(read).toMatchObject({ idempotencyKey: undefined, outcomeUnknown: false });
  });

  it('aborted while its journal entry is written: never sent, the entry says not_sent', async () => {
    const controller = new AbortController();
    // A journal that is slow to store: the caller gives up meanwhile.
    class AbortingJournal extends MemoryJournal {
      override async write(entry: JournalEntry): Promise<void> {
        if (entry.kind === 'request' && entry.state === 'sending') controller.abort();
        await super.write(entry);
      }
    }
    const client = await liveClient({ journal: new AbortingJournal() });
    const idempotencyKey = crypto.randomUUID();
    const error = await client.chat.completions
      .create(chat('never sent either'), { idempotencyKey, signal: controller.signal })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AbortedError);
    expect(error).toMatchObject({ idempotencyKey, outcomeUnknown: false });
    expect(await client.journal.read(idempotencyKey)).toMatchObject({ state: 'not_sent' });
    await expect(client.requests.getByIdempotencyKey(idempotencyKey)).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('a wait between reads (generate) raises AbortedError, not the signal reason', async () => {
    const client = await liveClient();
    const controller = new AbortController();
    const input = { model: 'sim-video', prompt: 'slow [sim:task_seconds=600]', seconds: 1 };
    const generating = client.videos
      .generate(input, {
        maxAmount: 1_000_000,
        wait: { initialMs: 5_000 },
        signal: controller.signal,
      })
      .catch((caught: unknown) => caught);
    await eventually(async () =>
      (await client.pendingJobs()).some((job) => job.taskId !== undefined),
    );
    controller.abort();
    const error = await generating;
    expect(error).toBeInstanceOf(AbortedError);
    expect(error).toMatchObject({ outcomeUnknown: false });
    // The job stays in the journal: the same call goes on with the same task.
    expect(await client.pendingJobs()).toHaveLength(1);
  });
});
