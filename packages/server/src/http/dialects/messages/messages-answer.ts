import type {
  AnthropicContentBlock,
  AnthropicMessage,
  AnthropicStopReason,
  AnthropicUsage,
} from '@tollgate/protocol';
import type { ChatUsage } from '../../../chat/chat-types.js';
import { unverifiableBody } from '../../../providers/upstream-error.js';
import type { UpstreamCompletion } from '../../../providers/openai-compatible/chat-schemas.js';
import { thoughtSignatureOf } from '../../../providers/openai-compatible/thought-signatures.js';
import type { AnswerNames } from '../chat-dialect.js';
import { carriedThinkingSignature, tollgateSignature } from './thinking-signature.js';
import type { OpaqueOutput } from '../../../chat/opaque-parts.js';

/** `msg_` and the request id without its `req_` prefix: the record is found by either. */
export function messageId(requestId: string): string {
  return `msg_${requestId.startsWith('req_') ? requestId.slice('req_'.length) : requestId}`;
}

/**
 * Chat's finish reason in Anthropic's terms. A chat upstream does not say whether a stop
 * sequence ended the answer (its `stop` covers both), so `stop` is always `end_turn`. An
 * unknown finish reason reads as `end_turn` too; none at all is `null`.
 */
export function stopReason(finishReason: string | null): AnthropicStopReason | null {
  switch (finishReason) {
    case null:
      return null;
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Anthropic's usage: `input_tokens` excludes the cached input read (`cache_read_input_tokens`). */
export function anthropicUsage(usage: ChatUsage): AnthropicUsage {
  return {
    input_tokens: usage.promptTokens - usage.cachedTokens,
    output_tokens: usage.completionTokens,
    cache_read_input_tokens: usage.cachedTokens,
    cache_creation_input_tokens: 0,
  };
}

/**
 * A chat tool call's arguments as a tool_use `input`: the text parsed, and a JSON object (an
 * empty text is `{}`, as some upstreams send for a tool without parameters). `undefined`: not an
 * object, which the caller must never receive as one.
 */
export function toolInput(argumentsText: string): Record<string, unknown> | undefined {
  if (argumentsText.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The message object around its blocks: the answer, and the record's body, of every request. */
export function messageOf(
  names: AnswerNames,
  content: AnthropicContentBlock[],
  finishReason: string | null,
  usage: ChatUsage,
): AnthropicMessage {
  return {
    id: messageId(names.requestId),
    type: 'message',
    role: 'assistant',
    model: names.model,
    content,
    stop_reason: stopReason(finishReason),
    stop_sequence: null,
    usage: anthropicUsage(usage),
  };
}

/** Whether the answer shows its thinking (`thinking.display` is not `omitted`). */
export interface ThinkingShown {
  readonly shown: boolean;
}

/**
 * The plain answer: thinking (Tollgate-signed), text (content, else a refusal's text), then a
 * tool_use per tool call, each after its thought signature's block where it has one. A tool call
 * whose arguments are not a JSON object makes the answer unverifiable (an upstream error,
 * `submission_unknown`, hold kept: the upstream did the work), exactly as an answer failing the
 * boundary schema.
 */
export function plainMessage(
  completion: UpstreamCompletion,
  usage: ChatUsage,
  names: AnswerNames,
  thinking: ThinkingShown = { shown: true },
  opaque: readonly OpaqueOutput[] = [],
): AnthropicMessage {
  const choice = completion.choices[0];
  const message = choice?.message;
  const content: AnthropicContentBlock[] = opaque.map((part) => sealedThinking(part, thinking));
  const reasoning = message?.reasoning_content ?? '';
  if (reasoning !== '' && opaque.length === 0)
    content.push(
      thinking.shown
        ? { type: 'thinking', thinking: reasoning, signature: tollgateSignature(reasoning) }
        : // Not shown: its text travels in the signature, to be given back (thinking-signature.ts).
          { type: 'thinking', thinking: '', signature: carriedThinkingSignature(reasoning) },
    );
  const text = message?.content ?? message?.refusal ?? '';
  if (text !== '') content.push({ type: 'text', text });
  for (const call of message?.tool_calls ?? []) {
    const input = toolInput(call.function.arguments);
    if (input === undefined)
      throw unverifiableBody(
        null,
        `tool call ${call.id} has arguments that are not a JSON object; a tool_use input must be one`,
      );
    const signature = thoughtSignatureOf(call);
    if (signature !== undefined) content.push(thoughtSignatureBlock(signature));
    content.push({ type: 'tool_use', id: call.id, name: call.function.name, input });
  }
  return messageOf(names, content, choice?.finish_reason ?? null, usage);
}

/**
 * A Gemini thought signature (sealed: providers/openai-compatible/thought-signatures.ts) as the
 * block just before the tool_use it belongs to: thinking without text whose signature is the
 * token. A tool_use has no field for it, and a Messages client gives thinking blocks back
 * unchanged; the next turn puts it back on that tool call (to-chat-body.ts).
 */
export function thoughtSignatureBlock(token: string): AnthropicContentBlock {
  return { type: 'thinking', thinking: '', signature: token };
}

/**
 * Thinking an upstream sealed (chat/opaque-parts.ts) as a block the caller gives back
 * unchanged: the token is the signature (redacted thinking's `data`); with `display: "omitted"`
 * the text is left out and the signature kept, as Anthropic does.
 */
function sealedThinking(part: OpaqueOutput, thinking: ThinkingShown): AnthropicContentBlock {
  if (part.kind === 'anthropic_redacted_thinking')
    return { type: 'redacted_thinking', data: part.token };
  return { type: 'thinking', thinking: thinking.shown ? part.text : '', signature: part.token };
}
