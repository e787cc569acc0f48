import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  insuresAnswer,
  insuresFault,
  ZERO_COMPLETION_RULE,
  type AnswerSeen,
} from '../chat/zero-completion.js';
import { errors as undiciErrors } from 'undici';
import type { ChatUsage } from '../chat/chat-types.js';
import { ApiError } from '../errors/api-error.js';
import { heartbeatEveryMs } from '../maintenance/sweeper.js';
import type { StreamEvent } from '../providers/openai-compatible/chat.js';
import { toChatUsage } from '../providers/openai-compatible/chat.js';
import type { UpstreamChunk } from '../providers/openai-compatible/chat-schemas.js';
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
import { openSse, type SseWriter } from './sse.js';
import { withFields } from '../util/with-fields.js';

export interface StreamedChat {
  readonly model: string;
  readonly reserve: Reserve;
  /** Assets the request uses (kept from deletion until it is finished). */
  readonly assetIds?: readonly string[];
  /** Whether the caller asked for the usage chunk. */
  readonly includeUsage: boolean;
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
  /** The bill for reported usage; `flag` when usage beyond the gateway's cap was cut (billing/credible-usage.ts). */
  price(usage: ChatUsage): {
    amount: number;
    rule: string;
    flag: string | undefined;
    /** What the serving channel charges the operator (its `cost` prices); null: none. */
    channelCost: number | null;
  };
}

/** How a stream ended; each has one rule in docs/billing.md ("Stream endings"). */
type Ending =
  | { kind: 'completed'; usage: ChatUsage }
  | { kind: 'no_usage' }
  | { kind: 'upstream_error' }
  | { kind: 'invalid'; detail: string }
  | { kind: 'dropped'; detail: string }
  | { kind: 'stalled' }
  | { kind: 'client_disconnected' };

/**
 * A streamed chat: claim and hold, open the upstream stream (failures before the first byte
 * answer as JSON, like non-streamed requests), then relay checked chunks as SSE, flushing each.
 * Usage is always asked of the upstream and passed on only when the caller asked. A caller that
 * goes away aborts the upstream request. Every ending is recorded with its rule and the
 * transcript of what was sent, which a replay sends again.
 */
export async function runStreamedChat(
  deps: Pick<AppDeps, 'requests' | 'metrics' | 'logger' | 'clock' | 'config'>,
  request: FastifyRequest,
  reply: FastifyReply,
  chat: StreamedChat,
): Promise<unknown> {
  const claimed = await claimOrReplay(deps, request, reply, chat);
  if (claimed === undefined) return reply;
  try {
    return await relayStream(deps, request, reply, chat, claimed);
  } finally {
    // The channel's concurrency slot, kept while the stream was open, is free however it ended.
    chat.routing?.finish();
  }
}

async function relayStream(
  deps: Pick<AppDeps, 'requests' | 'metrics' | 'logger' | 'clock' | 'config'>,
  request: FastifyRequest,
  reply: FastifyReply,
  chat: StreamedChat,
  claimed: ClaimedRequest,
): Promise<unknown> {
  // A stream has no total time limit: while it relays, its record shows the sweeper it is alive.
  const heartbeat = deps.requests.heartbeat(request.id, heartbeatEveryMs(deps.config));
  const abort = new AbortController();
  const onClose = () => {
    if (!reply.raw.writableFinished) abort.abort();
  };
  reply.raw.on('close', onClose);
  let opened: Awaited<ReturnType<StreamedChat['open']>>;
  try {
    opened = await chat.open(abort.signal);
  } catch (error) {
    // Nothing streamed yet: answer like a plain request.
    const answer = await finishAndCount(
      deps,
      claimed,
      withTrail(failureOutcome(error, deps, request.id), chat.routing),
    );
    reply.raw.off('close', onClose);
    return reply.code(answer.status).send(answer.body);
  }

  const writer = openSse(reply);
  const transcript: string[] = [];
  const relayed = (data: string) => {
    transcript.push(data);
    writer.send(data);
  };
  const relay = new ChunkRelay(
    `chatcmpl-${request.id}`,
    chat.model,
    Math.floor(deps.clock.now() / 1000),
    chat.includeUsage,
  );
  const ending = await relayEvents(opened.events, relay, relayed, writer, abort.signal, heartbeat);
  chat.routing?.finish();
  reply.raw.off('close', onClose);
  const outcome = decide(ending, relay, chat, opened.upstreamRequestId, request.id);
  const final =
    outcome.kind === 'succeeded' ? '[DONE]' : JSON.stringify(outcome.error.toBody(request.id));
  const answer = await finishAndCount(
    deps,
    claimed,
    withTrail(withFields(outcome, { transcript: [...transcript, final] }), chat.routing),
  );
  if (answer.status === 200 || outcome.kind !== 'succeeded') {
    writer.send(final);
  } else {
    // Usage above the hold and not available: the caller has the text, the record awaits funds.
    const waiting = JSON.stringify(answer.body);
    writer.send(waiting);
    await deps.requests.recordAwaitingFundsTranscript(request.id, [...transcript, waiting]);
  }
  writer.end();
  return reply;
}

async function relayEvents(
  events: AsyncGenerator<StreamEvent>,
  relay: ChunkRelay,
  send: (data: string) => void,
  writer: SseWriter,
  signal: AbortSignal,
  heartbeat: RecordHeartbeat,
): Promise<Ending> {
  let usage: ChatUsage | undefined;
  try {
    for await (const event of events) {
      await heartbeat.beat();
      if (event.kind === 'done')
        return usage === undefined ? { kind: 'no_usage' } : { kind: 'completed', usage };
      if (event.kind === 'upstream_error') return { kind: 'upstream_error' };
      if (event.kind === 'invalid') return { kind: 'invalid', detail: event.detail };
      if (event.chunk.usage !== undefined && event.chunk.usage !== null) {
        usage = toChatUsage(event.chunk.usage);
        if (usage === undefined)
          return { kind: 'invalid', detail: 'usage details exceed their totals' };
      }
      const data = relay.rebuild(event.chunk);
      if (data !== undefined) send(data);
      if (writer.closed) return { kind: 'client_disconnected' };
    }
    return { kind: 'dropped', detail: 'stream closed without [DONE]' };
  } catch (error) {
    if (signal.aborted) return { kind: 'client_disconnected' };
    if (error instanceof undiciErrors.BodyTimeoutError) return { kind: 'stalled' };
    return {
      kind: 'dropped',
      detail: (error as { code?: string }).code ?? (error as Error).message,
    };
  }
}

function decide(
  ending: Ending,
  relay: ChunkRelay,
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
      const { amount, rule, flag, channelCost } = chat.price(ending.usage);
      return {
        kind: 'succeeded',
        body: relay.assembled(ending.usage),
        usage: usageFields(ending.usage),
        amount,
        channelCost,
        pricingRule: `stream completed with usage; ${rule}`,
        upstreamRequestId,
        ...(flag === undefined ? {} : { usageFlag: flag }),
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
    case 'no_usage':
      return unknown(
        'UPSTREAM_ERROR',
        'the upstream finished without reporting usage, so the result cannot be priced',
        'ended without usage',
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
    case 'client_disconnected':
      return unknown(
        'UPSTREAM_ERROR',
        'the caller disconnected; the upstream request was aborted',
        'client disconnected',
      );
  }
}

export function usageFields(usage: ChatUsage): Record<string, number> {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    cached_tokens: usage.cachedTokens,
    reasoning_tokens: usage.reasoningTokens,
  };
}

/**
 * The endings zero-completion insurance covers (chat/zero-completion.ts): a completed answer
 * with no output tokens and no finish reason is priced at 0; an upstream fault mid-stream before
 * any output releases the hold instead of keeping it for an operator. `undefined`: not insured.
 */
function insuredOutcome(
  ending: Ending,
  relay: ChunkRelay,
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
  // A caller's own disconnect is not the upstream's fault; an error before any chunk is
  // already released by its own rule.
  if (ending.kind === 'client_disconnected') return undefined;
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

/** Rebuilds each chunk from checked fields under our id and model, and assembles the whole reply. */
class ChunkRelay {
  chunks = 0;
  private content = '';
  private reasoning = '';
  private finishReason: string | null = null;
  private readonly toolCalls = new Map<
    number,
    { id: string; type: 'function'; function: { name: string; arguments: string } }
  >();

  constructor(
    private readonly id: string,
    private readonly model: string,
    private readonly created: number,
    private readonly includeUsage: boolean,
  ) {}

  /** What the caller was sent, for zero-completion insurance. */
  seen(completionTokens: number | undefined): AnswerSeen {
    return {
      producedOutput: this.content !== '' || this.reasoning !== '' || this.toolCalls.size > 0,
      finishReason: this.finishReason,
      completionTokens,
    };
  }

  rebuild(chunk: UpstreamChunk): string | undefined {
    for (const choice of chunk.choices) {
      this.content += choice.delta.content ?? '';
      this.reasoning += choice.delta.reasoning_content ?? '';
      if (choice.finish_reason !== undefined && choice.finish_reason !== null)
        this.finishReason = choice.finish_reason;
      for (const call of choice.delta.tool_calls ?? []) {
        const existing = this.toolCalls.get(call.index) ?? {
          id: '',
          type: 'function' as const,
          function: { name: '', arguments: '' },
        };
        existing.id ||= call.id ?? '';
        existing.function.name += call.function?.name ?? '';
        existing.function.arguments += call.function?.arguments ?? '';
        this.toolCalls.set(call.index, existing);
      }
    }
    const usage =
      chunk.usage !== undefined && chunk.usage !== null ? toChatUsage(chunk.usage) : undefined;
    if (chunk.choices.length === 0 && (!this.includeUsage || usage === undefined)) return undefined;
    this.chunks += 1;
    const rebuilt = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: chunk.choices,
      ...(this.includeUsage ? { usage: usage === undefined ? null : openAiUsage(usage) } : {}),
    };
    return JSON.stringify(rebuilt);
  }

  assembled(usage: ChatUsage) {
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: this.content === '' && this.toolCalls.size > 0 ? null : this.content,
            ...(this.reasoning === '' ? {} : { reasoning_content: this.reasoning }),
            ...(this.toolCalls.size === 0
              ? {}
              : {
                  tool_calls: [...this.toolCalls.entries()]
                    .sort(([a], [b]) => a - b)
                    .map(([, call]) => call),
                }),
          },
          finish_reason: this.finishReason,
        },
      ],
      usage: openAiUsage(usage),
    };
  }
}

/** OpenAI's usage object. */
export function openAiUsage(usage: ChatUsage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}
