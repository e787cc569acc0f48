import type {
  ResponseObject,
  ResponseOutputItem,
  ResponseReasoningItem,
  ResponseUsage,
} from '@tollgate/protocol';
import type { OpaqueOutput } from '../../../chat/opaque-parts.js';
import type { ChatUsage } from '../../../chat/chat-types.js';
import type { ToolCallExtraContent } from '../../../providers/openai-compatible/chat-schemas.js';
import { thoughtSignatureOf } from '../../../providers/openai-compatible/thought-signatures.js';
import type { AnswerNames } from '../chat-dialect.js';
import type { ResponsesBody } from './responses-request.js';

/** A response's id: the request's own id under OpenAI's prefix (`req_x` → `resp_x`). */
export const responseIdOf = (requestId: string) => `resp_${requestId.replace(/^req_/, '')}`;
/** The request a response id names (`resp_x` → `req_x`); `undefined` for another shape. */
export const requestIdOfResponse = (responseId: string) =>
  /^resp_[0-9A-Za-z]{1,64}$/.test(responseId) ? `req_${responseId.slice(5)}` : undefined;

/**
 * The id of a response's output item: its kind's prefix, the request's id and the item's place
 * in `output` (stable across replays, unique across responses).
 */
export function itemId(prefix: 'msg' | 'rs' | 'fc', requestId: string, outputIndex: number) {
  return `${prefix}_${requestId.replace(/^req_/, '')}_${outputIndex}`;
}

export function responseUsage(usage: ChatUsage): ResponseUsage {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/** A response's status from the chat finish reason: cut by the output cap or a filter is `incomplete`. */
export function finishStatus(finishReason: string | null): {
  status: 'completed' | 'incomplete';
  incomplete_details: ResponseObject['incomplete_details'];
} {
  if (finishReason === 'length')
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter')
    return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** What a response repeats of its request (OpenAI echoes these on every response object). */
export type ResponseEcho = Pick<
  ResponseObject,
  | 'instructions'
  | 'max_output_tokens'
  | 'parallel_tool_calls'
  | 'previous_response_id'
  | 'reasoning'
  | 'store'
  | 'temperature'
  | 'text'
  | 'tool_choice'
  | 'tools'
  | 'top_p'
  | 'truncation'
  | 'metadata'
> & {
  /** `include` lists `reasoning.encrypted_content`: reasoning items carry the field. */
  readonly includeEncrypted: boolean;
};

export function responseEcho(body: ResponsesBody): ResponseEcho {
  return {
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: {
      effort: body.reasoning?.effort ?? null,
      summary: body.reasoning?.summary ?? null,
    },
    store: body.store ?? true,
    temperature: body.temperature ?? null,
    text: { format: body.text?.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: (body.tools ?? []).map((tool) => ({ ...tool })),
    top_p: body.top_p ?? null,
    truncation: 'disabled',
    metadata: body.metadata ?? {},
    includeEncrypted: (body.include ?? []).includes('reasoning.encrypted_content'),
  };
}

export function responseObject(
  echo: ResponseEcho,
  names: AnswerNames,
  state: Pick<ResponseObject, 'status' | 'incomplete_details' | 'output' | 'usage' | 'error'>,
): ResponseObject {
  const { includeEncrypted: _includeEncrypted, ...echoed } = echo;
  return {
    id: responseIdOf(names.requestId),
    object: 'response',
    created_at: names.created,
    model: names.model,
    ...echoed,
    ...state,
  };
}

/**
 * The output items of one chat answer: reasoning, then the message, then each function call
 * (after its thought signature's item, where it has one).
 */
export function outputItems(
  answer: {
    content: string | null;
    reasoning: string;
    refusal: string | null;
    toolCalls: readonly {
      id: string;
      function: { name: string; arguments: string };
      extra_content?: ToolCallExtraContent | undefined;
    }[];
  },
  requestId: string,
  echo: ResponseEcho,
  status: 'completed' | 'incomplete',
  opaque: readonly OpaqueOutput[] = [],
): ResponseOutputItem[] {
  const items: ResponseOutputItem[] = [];
  // Reasoning an upstream sealed (chat/opaque-parts.ts): one item per part, carrying it back.
  for (const part of opaque)
    items.push(sealedReasoningItem(itemId('rs', requestId, items.length), part));
  if (answer.reasoning !== '' && opaque.length === 0)
    items.push({
      type: 'reasoning',
      id: itemId('rs', requestId, items.length),
      summary: [],
      content: [{ type: 'reasoning_text', text: answer.reasoning }],
      ...(echo.includeEncrypted ? { encrypted_content: null } : {}),
    });
  const text = answer.content ?? '';
  if (text !== '' || answer.refusal !== null || answer.toolCalls.length === 0)
    items.push({
      type: 'message',
      id: itemId('msg', requestId, items.length),
      status,
      role: 'assistant',
      content: [
        ...(answer.refusal !== null && text === ''
          ? []
          : [{ type: 'output_text' as const, text, annotations: [], logprobs: [] }]),
        ...(answer.refusal === null ? [] : [{ type: 'refusal' as const, refusal: answer.refusal }]),
      ],
    });
  for (const call of answer.toolCalls) {
    const signature = thoughtSignatureOf(call);
    if (signature !== undefined)
      items.push(thoughtSignatureItem(itemId('rs', requestId, items.length), signature));
    items.push({
      type: 'function_call',
      id: itemId('fc', requestId, items.length),
      call_id: call.id,
      name: call.function.name,
      arguments: call.function.arguments,
      status: 'completed',
    });
  }
  return items;
}

/**
 * A Gemini thought signature (sealed: providers/openai-compatible/thought-signatures.ts) as the
 * reasoning item just before the function_call it belongs to, its `encrypted_content` the token:
 * a function_call item has no field for it, and Codex gives reasoning items back unchanged; the
 * next turn puts it back on that call (responses-to-chat.ts).
 */
export function thoughtSignatureItem(id: string, token: string): ResponseReasoningItem {
  return sealedReasoningItem(id, { token, kind: 'gemini_thought_signature', text: '' });
}

/**
 * A reasoning item holding an opaque part: its text as the summary, the sealed part as its
 * `encrypted_content` (always present, `include` or not: without it the next turn could not
 * give the reasoning back, and the upstream refuses a tool call without its reasoning).
 */
export function sealedReasoningItem(id: string, part: OpaqueOutput): ResponseReasoningItem {
  return {
    type: 'reasoning',
    id,
    summary: part.text === '' ? [] : [{ type: 'summary_text', text: part.text }],
    encrypted_content: part.token,
  };
}
