import type { ChatUsage } from '../chat/chat-types.js';
import type { OpaqueOutput, PlacedOpaquePart } from '../chat/opaque-parts.js';
import type { UpstreamChunk, UpstreamCompletion } from './openai-compatible/chat-schemas.js';

/**
 * One chat upstream, whatever protocol it speaks (docs/agents.md, "Upstream protocols"): it
 * takes the internal chat request (a chat-completions body) and answers in the internal shape
 * (a checked chat completion, or checked chunks), translating both ways and reading the usage
 * its protocol reports. Adapters: openai-compatible/chat.ts (`chat_completions`),
 * openai-responses/ (`responses`), anthropic/ (`messages`).
 */
export interface ChatUpstream {
  complete(body: Record<string, unknown>, options: ChatCallOptions): Promise<ChatAnswer>;
  stream(
    body: Record<string, unknown>,
    signal: AbortSignal,
    options: ChatCallOptions,
  ): Promise<{ events: AsyncGenerator<StreamEvent>; upstreamRequestId: string | null }>;
  /**
   * Compacts the conversation of `body` by the upstream's own compaction endpoint (OpenAI's
   * `POST /v1/responses/compact`): the answer's `items` replace the history. Only protocols that
   * have one implement it (http/dialects/responses/responses-compact.ts summarises otherwise).
   */
  compact?(body: Record<string, unknown>, options: ChatCallOptions): Promise<ChatAnswer>;
}

export interface ChatCallOptions {
  /** The channel called: opaque parts it makes are sealed with its id. */
  readonly channel: string;
  /**
   * The model id the caller named (never the upstream's name for it), for the caller's own
   * errors (a context-length refusal: context-length.ts).
   */
  readonly model?: string;
  /** The conversation's opaque parts, all made by this channel (the turn is pinned to it). */
  readonly opaque: readonly PlacedOpaquePart[];
  /** The output cap held: sent by protocols that require one (Anthropic's `max_tokens`). */
  readonly maxOutputTokens: number;
  /** The caller's `anthropic-beta` header: sent to Anthropic upstreams only, verbatim. */
  readonly anthropicBeta?: string | undefined;
}

export interface ChatAnswer {
  readonly completion: UpstreamCompletion;
  readonly usage: ChatUsage;
  readonly upstreamRequestId: string | null;
  /** Opaque parts of the answer, sealed for the caller, in the order they came. */
  readonly opaque?: readonly OpaqueOutput[];
  /**
   * A compaction's answer (`compact`): the items that replace the history, in the Responses
   * shape, checked, their opaque content already sealed for the caller.
   */
  readonly items?: readonly Readonly<Record<string, unknown>>[];
}

/** One event of an upstream stream, after the boundary check. */
export type StreamEvent =
  | {
      kind: 'chunk';
      chunk: UpstreamChunk;
      opaque?: readonly OpaqueOutput[];
      /**
       * The checked usage this chunk reports, when the chunk's own usage shape cannot say it all
       * (Anthropic's cache writes): read instead of `chunk.usage`, which then only shows it.
       */
      usage?: ChatUsage;
    }
  | { kind: 'done' }
  /** The upstream put an error object into the stream. */
  | { kind: 'upstream_error' }
  /** Not JSON, or not a chunk: the stream can no longer be trusted. */
  | { kind: 'invalid'; detail: string };
