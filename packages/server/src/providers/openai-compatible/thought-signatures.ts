import { opaqueToken, readOpaqueToken } from '../../chat/opaque-parts.js';
import { notCarried } from '../upstream-error.js';
import type { ToolCallExtraContent, UpstreamChunk, UpstreamCompletion } from './chat-schemas.js';
import type { ProviderDialect } from './provider-dialects.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Gemini's thought signatures (ai.google.dev/gemini-api/docs/thought-signatures): its
 * OpenAI-compatible answer puts one on a tool call (`extra_content.google.thought_signature`),
 * and the next turn must send it back unchanged with that call (Gemini 3 refuses the turn
 * without it). It is opaque state, handled as the other upstreams' is (chat/opaque-parts.ts):
 *
 * - In an answer, the signature reaches the caller sealed (`tgo1.…`, naming the channel that
 *   made it) in the same place, `extra_content.google.thought_signature`, plain and streamed.
 *   A dialect that makes no signatures passes none on.
 * - In a request, a sealed signature goes back opened, on its call, to the channel that made it,
 *   and to no other: every other chat-completions channel refuses the turn before sending
 *   (`notCarried`, 400 naming the field), so the router moves it on until the channel that made
 *   the signature takes it; with that channel gone or unusable the turn is that 400. A signature
 *   this gateway did not seal (made for another client, or altered) is refused the same way.
 *   `extra_content` with no signature carries nothing any provider reads: left out.
 */

/**
 * A tool call's `extra_content` holding one thought signature (sealed or raw, as given): the
 * only shape of it this gateway makes, on an answer's call or a request's.
 */
export function thoughtSignatureExtra(signature: string): ToolCallExtraContent {
  return { google: { thought_signature: signature } };
}

/**
 * The thought signature on a tool call (sealed or raw, as it stands), read from
 * `extra_content.google.thought_signature`; `undefined` when the call has none: no
 * `extra_content`, one of another shape, or an empty signature. Takes checked and unchecked
 * calls alike (an upstream's answer, a caller's request).
 */
export function thoughtSignatureOf(call: { readonly extra_content?: unknown }): string | undefined {
  const extra = call.extra_content;
  if (!isObject(extra) || !isObject(extra['google'])) return undefined;
  const signature = extra['google']['thought_signature'];
  return typeof signature === 'string' && signature !== '' ? signature : undefined;
}

/** The answer's tool calls with their signatures sealed for the caller (or left out). */
export function sealedCompletion(
  completion: UpstreamCompletion,
  dialect: ProviderDialect,
  channel: string,
): UpstreamCompletion {
  if (!completion.choices.some((choice) => choice.message.tool_calls?.some(hasExtra)))
    return completion;
  return {
    ...completion,
    choices: completion.choices.map((choice) => ({
      ...choice,
      message: {
        ...choice.message,
        tool_calls: choice.message.tool_calls?.map((call) => sealedCall(call, dialect, channel)),
      },
    })),
  };
}

/**
 * A chunk's tool-call deltas with their signatures sealed for the caller (or left out). Gemini
 * sends a call's signature whole, in one delta with the call; a signature split across deltas
 * would be sealed in pieces and not read back.
 */
export function sealedChunk(
  chunk: UpstreamChunk,
  dialect: ProviderDialect,
  channel: string,
): UpstreamChunk {
  if (!chunk.choices.some((choice) => choice.delta.tool_calls?.some(hasExtra))) return chunk;
  return {
    ...chunk,
    choices: chunk.choices.map((choice) => ({
      ...choice,
      delta: {
        ...choice.delta,
        tool_calls: choice.delta.tool_calls?.map((call) => sealedCall(call, dialect, channel)),
      },
    })),
  };
}

const hasExtra = (call: { extra_content?: unknown }) => call.extra_content !== undefined;

function sealedCall<T extends { extra_content?: ToolCallExtraContent | undefined }>(
  call: T,
  dialect: ProviderDialect,
  channel: string,
): T {
  const { extra_content: _extra, ...rest } = call;
  const signature = thoughtSignatureOf(call);
  if (signature === undefined || !dialect.thoughtSignatures) return rest as T;
  const token = opaqueToken({
    channel,
    kind: 'gemini_thought_signature',
    payload: { thought_signature: signature },
  });
  return { ...rest, extra_content: thoughtSignatureExtra(token) } as T;
}

/**
 * The request's messages with each tool call's `extra_content` as this channel's upstream takes
 * it: its own sealed signature opened; no `extra_content` where there is no signature. Throws
 * `notCarried` for a signature sealed by another channel, or not sealed by this gateway.
 */
export function openedSignatures(
  messages: readonly unknown[],
  dialect: ProviderDialect,
  channel: string,
): unknown[] {
  return messages.map((message, messageIndex) => {
    if (!isObject(message) || !Array.isArray(message['tool_calls'])) return message;
    const calls = message['tool_calls'] as unknown[];
    if (!calls.some((call) => isObject(call) && 'extra_content' in call)) return message;
    return {
      ...message,
      tool_calls: calls.map((call, callIndex) => {
        if (!isObject(call) || !('extra_content' in call)) return call;
        const { extra_content: _extra, ...rest } = call;
        const path = `messages.${messageIndex}.tool_calls.${callIndex}.extra_content.google.thought_signature`;
        const signature = thoughtSignatureOf(call);
        if (signature === undefined) return rest;
        const part = readOpaqueToken(signature);
        if (part === undefined || part.kind !== 'gemini_thought_signature')
          throw notCarried(
            path,
            'is not a thought signature sealed by this gateway: a signature can only go back, unchanged, to the upstream that made it, through the channel that made it; send back the one this gateway returned, or leave it out',
          );
        const raw = part.payload['thought_signature'];
        if (part.channel !== channel || !dialect.thoughtSignatures || typeof raw !== 'string')
          throw notCarried(
            path,
            `was made by channel ${part.channel}: only that channel's upstream can read it; start a new conversation, or leave it out`,
          );
        return { ...rest, extra_content: thoughtSignatureExtra(raw) };
      }),
    };
  });
}
