import type { BillLineItem } from '@tollgate/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { insuresAnswer, insuresFault, ZERO_COMPLETION_RULE } from '../chat/zero-completion.js';
import { errors as undiciErrors } from 'undici';
import type { ChatUsage } from '../chat/chat-types.js';
import { COUNTED_LOCALLY, type GeneratedBytes } from '../chat/token-estimate.js';
import { StreamTally } from './stream-tally.js';
import { withToolCalls } from '../chat/chat-pricing.js';
import { usageFields } from '../chat/usage-fields.js';
import { ApiError } from '../errors/api-error.js';
import { heartbeatEveryMs } from '../requests/record-ages.js';
import type { StreamEvent } from '../providers/chat-upstream.js';
import { toChatUsage } from '../providers/openai-compatible/chat.js';
import { UnpresentableChunk, type StreamPresenter } from './dialects/chat-dialect.js';
import type { RecordHeartbeat } from '../requests/record-heartbeat.js';
import type { RecordedOutcome, Reserve } from '../requests/request-service.js';
import type { RoutedCall } from '../routing/channel-router.js';
import {
  claimOrReplay,
  failureOutcome,
  finishAndCount,
  withTrail,
  type ClaimedRequest,
} from './billed-request.js';
import type { AppDeps } from './deps.js';
import { openSse, transcriptEntry, type SseFrame, type SseWriter } from './sse.js';
import type { StreamCut } from './streams-in-flight.js';
import { outcomeNotRecorded } from '../errors/database-outage.js';
import { withFields } from '../util/with-fields.js';

export interface StreamedChat {
  readonly model: string;
  readonly reserve: Reserve;
  /** Assets the request uses (kept from deletion until it is finished). */
  readonly assetIds?: readonly string[];
  /** How the caller's protocol writes the stream (http/dialects/). */
  readonly presenter: StreamPresenter;
  /**
   * The output cap sent upstream (`max_tokens` or its equivalent): once the caller is gone, an
   * upstream that sends more chunks than this allows (plus `CHUNK_SLACK`) is no longer read.
   */
  readonly outputCap: number;
  open(
    signal: AbortSignal,
  ): Promise<{ events: AsyncGenerator<StreamEvent>; upstreamRequestId: string | null }>;
  /**
   * The channels `open` tried (routing/channel-router.ts), written on the record. `open` runs it
   * with `holdSlot`: the channel's concurrency slot is freed here when the stream ends.
   */
  readonly routing?: RoutedCall;
  /** Zero-completion insurance is on for this model (chat/zero-completion.ts). */
  readonly insured: boolean;
  /**
   * The usage of a stream that finished without reporting any, counted by the gateway's estimate
   * (chat/token-estimate.ts), with the record's note saying so.
   */
  countLocally(generated: GeneratedBytes): { usage: ChatUsage; flag: string };
  /** The bill for reported usage; `flag` when usage beyond the gateway's cap was cut (chat/credible-usage.ts). */
  price(usage: ChatUsage): {
    amount: number;
    rule: string;
    flag: string | undefined;
    /** What the serving channel charges the operator (its `cost` prices); null: none. */
    channelCost: number | null;
    /** What `amount` is made of (`bill.line_items`). */
    lineItems: readonly BillLineItem[];
  };
}

/**
 * Chunks an upstream may send beyond one per output token before a stream nobody listens to is
 * no longer read: the role chunk, the finish chunk, the usage chunk, and some room for
 * upstreams that split a token's text.
 */
export const CHUNK_SLACK = 16;

/** How a stream ended; each has one rule in docs/billing.md ("Stream endings"). */
type Ending =
  /** `countedLocally`: the record's note when the usage was counted here (`no_usage` below). */
  | { kind: 'completed'; usage: ChatUsage; countedLocally?: string }
  | { kind: 'upstream_error' }
  | { kind: 'invalid'; detail: string }
  | { kind: 'dropped'; detail: string }
  | { kind: 'stalled' }
  /** This gateway stopped reading (streams-in-flight.ts): shut down, or past the cap unheard. */
  | { kind: 'cut'; cut: StreamCut; bound: number };

/** How reading the stream ended: a stream finished without usage is then counted (`counted`). */
type ReadEnding = Ending | { kind: 'no_usage'; generated: GeneratedBytes; toolCalls: number };

/** A stream finished without usage is billed on the gateway's count, flagged on the record. */
function counted(read: ReadEnding, chat: StreamedChat): Ending {
  if (read.kind !== 'no_usage') return read;
  const { usage, flag } = chat.countLocally(read.generated);
  return { kind: 'completed', usage: withToolCalls(usage, read.toolCalls), countedLocally: flag };
}

type StreamDeps = Pick<
  AppDeps,
  'requests' | 'metrics' | 'logger' | 'clock' | 'config' | 'streamsInFlight'
>;

/**
 * A streamed chat: claim and hold, open the upstream stream (failures before the first byte
 * answer as JSON, like non-streamed requests), then relay checked chunks as SSE, flushing each.
 * Usage is always asked of the upstream and passed on only when the caller asked. A caller that
 * goes away does not stop the work (docs/chat.md, "A caller that goes away"): the upstream is
 * read to its end, within the request's output cap and the upstream's idle timeout, and billed
 * as if the caller had stayed. Every ending is recorded with its rule and the transcript of what
 * was (or would have been) sent, which a replay by idempotency key sends again.
 */
export async function runStreamedChat(
  deps: StreamDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  chat: StreamedChat,
): Promise<unknown> {
  const claimed = await claimOrReplay(deps, request, reply, chat);
  if (claimed === undefined) return reply;
  // The key's in-flight slot (rate-limit.ts) is held until the upstream is read to its end, not
  // only while the caller listens: starting streams and leaving never exceeds a key's limit.
  const releaseKeySlot = request.releaseRateLimit;
  request.releaseRateLimit = undefined;
  // Only this gateway stops the upstream: past the cap with nobody listening, or at shutdown.
  const stop = new AbortController();
  const done = deps.streamsInFlight.begin((cut) => stop.abort(cut));
  try {
    return await relayStream(deps, request, reply, chat, claimed, stop);
  } finally {
    // The channel's concurrency slot, kept while the stream was open, is free however it ended.
    chat.routing?.finish();
    releaseKeySlot?.();
    done();
  }
}

async function relayStream(
  deps: StreamDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  chat: StreamedChat,
  claimed: ClaimedRequest,
  stop: AbortController,
): Promise<unknown> {
  // A stream has no total time limit: while it relays, its record shows the sweeper it is alive.
  const heartbeat = deps.requests.heartbeat(request.id, heartbeatEveryMs(deps.config));
  let opened: Awaited<ReturnType<StreamedChat['open']>>;
  try {
    opened = await chat.open(stop.signal);
  } catch (error) {
    // Nothing streamed yet: answer like a plain request.
    const answer = await finishAndCount(
      deps,
      claimed,
      withTrail(failureOutcome(error, deps, request.id), chat.routing),
    ).catch((failure: unknown) => {
      throw outcomeNotRecorded(failure, request.id) ?? failure;
    });
    return reply.code(answer.status).send(answer.body);
  }

  const writer = openSse(reply);
  const transcript: string[] = [];
  const relayed = (frames: readonly SseFrame[]) => {
    for (const frame of frames) {
      const entry = transcriptEntry(frame);
      transcript.push(entry);
      writer.send(entry);
    }
  };
  const relay = chat.presenter;
  relayed(relay.opening());
  const read = await relayEvents(opened.events, relay, relayed, {
    writer,
    stop,
    heartbeat,
    unheardBound: chat.outputCap + CHUNK_SLACK,
  });
  const ending = counted(read, chat);
  chat.routing?.finish();
  if (writer.closed && ending.kind !== 'cut')
    deps.logger.info(
      { requestId: request.id, ending: read.kind, chunks: relay.chunks },
      'stream read to its end after the caller went away',
    );
  const outcome = decide(ending, relay, chat, opened.upstreamRequestId, request.id);
  const final = endingFrames(relay, outcome, ending, request.id).map(transcriptEntry);
  let answer: Awaited<ReturnType<typeof finishAndCount>>;
  try {
    answer = await finishAndCount(
      deps,
      claimed,
      withTrail(withFields(outcome, { transcript: [...transcript, ...final] }), chat.routing),
    );
  } catch (error) {
    // The stream is open: its last event says what became of it, and it ends.
    deps.logger.error({ requestId: request.id, err: error }, 'stream outcome not recorded');
    const unrecorded =
      outcomeNotRecorded(error, request.id) ??
      new ApiError(
        'INTERNAL_ERROR',
        `internal error: the outcome of this request could not be recorded; read GET /v1/requests/${request.id}`,
      );
    for (const frame of relay.failed(unrecorded.toBody(request.id)))
      writer.send(transcriptEntry(frame));
    writer.end();
    return reply;
  }
  if (answer.status === 200 || outcome.kind !== 'succeeded') {
    for (const entry of final) writer.send(entry);
  } else {
    // Usage above the hold and not available: the caller has the text, the record awaits funds.
    const waiting = relay.failed(answer.body).map(transcriptEntry);
    for (const entry of waiting) writer.send(entry);
    await deps.requests.recordAwaitingFundsTranscript(request.id, [...transcript, ...waiting]);
  }
  writer.end();
  return reply;
}

/** The frames that end the stream: the protocol's completion with its usage, or the error. */
function endingFrames(
  relay: StreamPresenter,
  outcome: RecordedOutcome,
  ending: Ending,
  requestId: string,
): SseFrame[] {
  if (outcome.kind !== 'succeeded') return relay.failed(outcome.error.toBody(requestId));
  // `decide` makes a success of a completed ending only: its usage is what the frames carry.
  if (ending.kind !== 'completed') throw new Error(`a stream ${ending.kind} was decided a success`);
  return relay.completed(ending.usage);
}

interface RelayControl {
  readonly writer: SseWriter;
  /** Aborted by this gateway only (`StreamCut` as its reason); never by the caller leaving. */
  readonly stop: AbortController;
  readonly heartbeat: RecordHeartbeat;
  /** The most upstream events read for a caller that is gone. */
  readonly unheardBound: number;
}

async function relayEvents(
  events: AsyncGenerator<StreamEvent>,
  relay: StreamPresenter,
  send: (frames: readonly SseFrame[]) => void,
  control: RelayControl,
): Promise<ReadEnding> {
  const { writer, stop, heartbeat, unheardBound } = control;
  const cut = (): Ending => ({
    kind: 'cut',
    cut: stop.signal.reason as StreamCut,
    bound: unheardBound,
  });
  let usage: ChatUsage | undefined;
  let read = 0;
  const tally = new StreamTally();
  try {
    for await (const event of events) {
      await heartbeat.beat();
      if (event.kind === 'done')
        return usage === undefined
          ? { kind: 'no_usage', generated: tally.generated, toolCalls: tally.toolCalls }
          : { kind: 'completed', usage: withToolCalls(usage, tally.toolCalls) };
      if (event.kind === 'upstream_error') return { kind: 'upstream_error' };
      if (event.kind === 'invalid') return { kind: 'invalid', detail: event.detail };
      if (event.usage !== undefined) usage = event.usage;
      else if (event.chunk.usage !== undefined && event.chunk.usage !== null) {
        usage = toChatUsage(event.chunk.usage);
        if (usage === undefined)
          return { kind: 'invalid', detail: 'usage details exceed their totals' };
      }
      // Sent while the caller listens; kept for the record (and a replay) either way.
      send(relay.relay(event.chunk, event.opaque));
      // Bytes only while the upstream reports no usage: the basis of the gateway's own count.
      tally.add(event.chunk, usage === undefined);
      read += 1;
      // Nobody listens any more: an upstream that goes on past the output cap is not read on.
      if (writer.closed && read > unheardBound) stop.abort('over_cap' satisfies StreamCut);
      if (stop.signal.aborted) return cut();
    }
    return { kind: 'dropped', detail: 'stream closed without [DONE]' };
  } catch (error) {
    if (error instanceof UnpresentableChunk) return { kind: 'invalid', detail: error.detail };
    if (stop.signal.aborted) return cut();
    if (error instanceof undiciErrors.BodyTimeoutError) return { kind: 'stalled' };
    return {
      kind: 'dropped',
      detail: (error as { code?: string }).code ?? (error as Error).message,
    };
  }
}

function decide(
  ending: Ending,
  relay: StreamPresenter,
  chat: StreamedChat,
  upstreamRequestId: string | null,
  requestId: string,
): RecordedOutcome {
  const after = `after ${relay.chunks} chunk(s)`;
  const insured = insuredOutcome(ending, relay, chat, upstreamRequestId);
  if (insured !== undefined) return insured;
  const unknown = (
    code: 'UPSTREAM_ERROR' | 'UPSTREAM_TIMEOUT',
    message: string,
    rule: string,
  ): RecordedOutcome => ({
    kind: 'unknown',
    error: new ApiError(
      code,
      `${message}; the outcome is unknown: read GET /v1/requests/${requestId}, do not send it again`,
    ),
    upstreamRequestId,
    rule: `stream ${rule} ${after}: outcome unknown, hold kept (submission_unknown)`,
  });
  switch (ending.kind) {
    case 'completed': {
      const { amount, rule, flag, channelCost, lineItems } = chat.price(ending.usage);
      const counted = ending.countedLocally;
      const usageFlag = counted === undefined ? flag : [counted, flag].filter(Boolean).join('; ');
      return {
        kind: 'succeeded',
        body: relay.assembled(ending.usage),
        usage: usageFields(ending.usage),
        amount,
        channelCost,
        lineItems,
        pricingRule:
          counted === undefined
            ? `stream completed with usage; ${rule}`
            : `stream completed without usage, counted by the gateway's estimate (${COUNTED_LOCALLY}); ${rule}`,
        upstreamRequestId,
        ...(usageFlag === undefined ? {} : { usageFlag }),
      };
    }
    case 'upstream_error':
      if (relay.chunks === 0) {
        return {
          kind: 'failed',
          error: new ApiError(
            'UPSTREAM_ERROR',
            'the upstream failed before sending any output; nothing was charged',
          ),
          upstreamRequestId,
          rule: 'stream: upstream error before any chunk: hold released',
        };
      }
      return unknown(
        'UPSTREAM_ERROR',
        'the upstream failed in the middle of the stream',
        'upstream error',
      );
    case 'invalid':
      return unknown(
        'UPSTREAM_ERROR',
        'the upstream sent a chunk that could not be verified',
        `invalid chunk (${ending.detail})`,
      );
    case 'dropped':
      return unknown(
        'UPSTREAM_ERROR',
        'the connection to the upstream broke in the middle of the stream',
        `dropped (${ending.detail})`,
      );
    case 'stalled':
      return unknown(
        'UPSTREAM_TIMEOUT',
        'the upstream stopped sending in the middle of the stream',
        'stalled past idle_ms',
      );
    case 'cut':
      return ending.cut === 'shutdown'
        ? unknown(
            'UPSTREAM_ERROR',
            'the gateway shut down before the upstream finished the stream',
            'cut by shutdown',
          )
        : unknown(
            'UPSTREAM_ERROR',
            `the caller went away and the upstream went on past the ${ending.bound} chunks this request's output cap allows; it was no longer read`,
            `read on for a caller that went away, stopped past ${ending.bound} chunks`,
          );
  }
}

/**
 * The endings zero-completion insurance covers (chat/zero-completion.ts): a completed answer
 * with no output tokens and no finish reason is priced at 0; an upstream fault mid-stream before
 * any output releases the hold instead of keeping it for an operator. `undefined`: not insured.
 */
function insuredOutcome(
  ending: Ending,
  relay: StreamPresenter,
  chat: StreamedChat,
  upstreamRequestId: string | null,
): RecordedOutcome | undefined {
  if (ending.kind === 'completed') {
    const seen = relay.seen(ending.usage.completionTokens);
    if (!insuresAnswer(chat.insured, seen)) return undefined;
    return {
      kind: 'succeeded',
      body: relay.assembled(ending.usage),
      usage: usageFields(ending.usage),
      amount: 0,
      pricingRule: `${ZERO_COMPLETION_RULE}: stream completed with no output tokens and no finish reason; not charged`,
      upstreamRequestId,
    };
  }
  // A stream this gateway stopped reading is not the upstream's fault before any output; an
  // error before any chunk is already released by its own rule.
  if (ending.kind === 'cut') return undefined;
  if (ending.kind === 'upstream_error' && relay.chunks === 0) return undefined;
  if (!insuresFault(chat.insured, relay.seen(undefined))) return undefined;
  return {
    kind: 'failed',
    error: new ApiError(
      ending.kind === 'stalled' ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_ERROR',
      'the upstream failed before producing any output; nothing was charged (zero-completion insurance)',
    ),
    upstreamRequestId,
    rule: `${ZERO_COMPLETION_RULE}: stream ${ending.kind.replace('_', ' ')} after ${relay.chunks} chunk(s) with no output: hold released, nothing charged`,
  };
}
