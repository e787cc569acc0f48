import type { ChatRequest, ChatUsage } from '../../chat/chat-types.js';
import type { OpaqueOutput } from '../../chat/opaque-parts.js';
import type { ChatAnswer } from '../../providers/chat-upstream.js';
import type { AnswerSeen } from '../../chat/zero-completion.js';
import type { UpstreamChunk } from '../../providers/openai-compatible/chat-schemas.js';
import type { SseFrame } from '../sse.js';

/** What every answer of one request is named by. */
export interface AnswerNames {
  readonly requestId: string;
  /** The model id the caller named (never the upstream's name for it). */
  readonly model: string;
  /** Unix seconds when the request was taken. */
  readonly created: number;
}

/**
 * One inbound protocol of a chat turn (docs/agents.md, "One internal request"): the route
 * turns its body into the internal chat request (`ChatTurnInput`), the turn does the money and
 * the upstream call once for every protocol, and the dialect says how the answer reads. A
 * dialect never decides money: it is handed usage that is already checked and priced.
 */
export interface ChatDialect {
  /** The plain answer, which is also the record's body (a replay sends it again). */
  answer(answer: ChatAnswer, names: AnswerNames): unknown;
  /** A presenter for one streamed answer. */
  presenter(names: AnswerNames, chat: ChatRequest): StreamPresenter;
}

/**
 * One streamed answer as the caller's protocol writes it, built from checked upstream chunks
 * only (http/streamed-chat.ts relays; this says what is sent).
 */
export interface StreamPresenter {
  /** Upstream chunks that produced a frame so far (the count rules and logs quote). */
  readonly chunks: number;
  /** Frames sent as soon as the upstream stream is open, before any chunk. */
  opening(): SseFrame[];
  /**
   * The frames one checked upstream chunk becomes (none: nothing to send). Throws
   * `UnpresentableChunk` for a chunk the protocol cannot present truthfully.
   */
  relay(chunk: UpstreamChunk, opaque?: readonly OpaqueOutput[]): SseFrame[];
  /** What the caller was sent, for zero-completion insurance (chat/zero-completion.ts). */
  seen(completionTokens: number | undefined): AnswerSeen;
  /** The whole answer as a plain request gets it: the record's body. */
  assembled(usage: ChatUsage): unknown;
  /** The frames that end a stream whose usage was recorded. */
  completed(usage: ChatUsage): SseFrame[];
  /** The frames that end a stream with this error body (the spec's error shape). */
  failed(errorBody: unknown): SseFrame[];
}

/**
 * A checked upstream chunk that the caller's protocol cannot present truthfully (Anthropic's
 * tool_use input must be a JSON object; a chat tool call's arguments may not be one). Thrown by
 * `StreamPresenter.relay`: the stream ends as a chunk that fails the boundary schema does
 * (docs/billing.md, "Stream endings": an error event, submission_unknown, hold kept).
 */
export class UnpresentableChunk extends Error {
  override readonly name = 'UnpresentableChunk';
  constructor(readonly detail: string) {
    super(detail);
  }
}
