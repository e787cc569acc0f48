import { ApiError, invalidInput } from '../../../errors/api-error.js';
import { readSummaryToken, summaryMessage } from '../../../chat/compaction-summary.js';
import {
  readOpaqueToken,
  type OpaqueKind,
  type PlacedOpaquePart,
} from '../../../chat/opaque-parts.js';
import { thoughtSignatureExtra } from '../../../providers/openai-compatible/thought-signatures.js';
import type {
  ResponsesBody,
  ResponsesContentPart,
  ResponsesInputItem,
} from './responses-request.js';

type ChatMessage = Record<string, unknown>;

/** The internal chat request of a Responses turn, and how its field names read back. */
export interface TranslatedResponses {
  /** The chat-completions body (http/chat-turn.ts validates and serves it). */
  readonly body: Record<string, unknown>;
  /** Fields taken and not sent upstream by a documented rule (`X-Tollgate-Dropped-Fields`). */
  readonly dropped: readonly string[];
  /** Encrypted reasoning this gateway sealed, going back to the channel that made it. */
  readonly opaque: readonly PlacedOpaquePart[];
  /** The caller's name for a field the chat validator named (`messages.3.content` → `input.2.content`). */
  fieldName(chatField: string): string;
}

/**
 * Translates a Responses body (its items after any stored conversation) into the chat body
 * (docs/agents.md, "One internal request"): instructions become the first system message, items
 * become messages (a function call joins the assistant message before it), function tools and
 * `text.format` take chat's shape. Reasoning the gateway itself returned (no encrypted content:
 * a chat upstream's `reasoning_content`) goes back as the `reasoning_content` of the assistant
 * message after it (its content text, else its summary text); whether it is sent is the
 * upstream's rule (provider-dialects.ts `reasoningHistory`: DeepSeek and Kimi refuse a tool call
 * without it). Encrypted reasoning was made by an upstream that sealed it and can only go back
 * to it: a 400 here, where no such channel serves the model.
 */
export function responsesToChat(
  body: ResponsesBody,
  items: readonly { item: ResponsesInputItem; path: string }[],
): TranslatedResponses {
  const messages: ChatMessage[] = [];
  /** Where each chat message (and each of its tool calls) came from, for error names. */
  const origins: string[] = [];
  const callOrigins = new Map<number, string[]>();
  /** Where a tool call's thought signature came from, by `message:call` index. */
  const signatureOrigins = new Map<string, string>();
  /** A reasoning item holding a Gemini thought signature was just read: the next call's. */
  let signature: { token: string; path: string } | undefined;
  const opaque: PlacedOpaquePart[] = [];
  /** A reasoning item was just read: the function call after it opens its own assistant turn. */
  let reasoningPending = false;
  /** The text of reasoning items just read that the gateway made from `reasoning_content`. */
  let reasoningText: string[] = [];
  /** The next assistant message takes the reasoning read just before it. */
  const withReasoning = (message: ChatMessage): ChatMessage =>
    message['role'] === 'assistant' && reasoningText.length > 0
      ? { ...message, reasoning_content: reasoningText.join('\n\n') }
      : message;
  if (body.instructions !== undefined && body.instructions !== null) {
    messages.push({ role: 'system', content: body.instructions });
    origins.push('instructions');
  }
  for (const { item, path } of items) {
    switch (item.type) {
      case 'message':
        messages.push(withReasoning(chatMessage(item.role, item.content, path)));
        origins.push(path);
        break;
      case 'function_call': {
        const call = {
          id: item.call_id,
          type: 'function',
          function: { name: item.name, arguments: item.arguments },
          ...(signature === undefined
            ? {}
            : { extra_content: thoughtSignatureExtra(signature.token) }),
        };
        const last = messages.at(-1);
        if (last?.['role'] === 'assistant' && !reasoningPending) {
          const calls = (last['tool_calls'] as unknown[] | undefined) ?? [];
          last['tool_calls'] = [...calls, call];
          const index = messages.length - 1;
          callOrigins.set(index, [...(callOrigins.get(index) ?? []), path]);
        } else {
          messages.push(withReasoning({ role: 'assistant', content: null, tool_calls: [call] }));
          origins.push(path);
          callOrigins.set(messages.length - 1, [path]);
        }
        if (signature !== undefined) {
          const index = messages.length - 1;
          const calls = callOrigins.get(index) ?? [];
          signatureOrigins.set(`${index}:${calls.length - 1}`, signature.path);
        }
        break;
      }
      case 'function_call_output':
        messages.push({
          role: 'tool',
          tool_call_id: item.call_id,
          content:
            typeof item.output === 'string'
              ? item.output
              : item.output.map((part, index) => toolText(part, `${path}.output.${index}`)),
        });
        origins.push(path);
        break;
      case 'reasoning': {
        const sealed = item.encrypted_content;
        if (sealed === undefined || sealed === null) {
          const text = reasoningTextOf(item);
          if (text !== '') {
            reasoningText = [...reasoningText, text];
            // It opens the answer it came with, as sealed reasoning does.
            reasoningPending = true;
          }
          continue;
        }
        // Gemini's thought signature (responses-answer.ts `thoughtSignatureItem`) goes back,
        // still sealed, on the function call right after it: the channel's adapter opens it,
        // or refuses it on another channel. Not an answer's reasoning: the call joins its turn.
        if (readOpaqueToken(sealed)?.kind === 'gemini_thought_signature') {
          signature = { token: sealed, path: `${path}.encrypted_content` };
          continue;
        }
        // Any upstream's reasoning (a Messages upstream's thinking is shown as a reasoning item).
        opaque.push(
          placedPart(sealed, (kind) => kind !== 'responses_compaction', messages.length, path),
        );
        reasoningPending = true;
        continue;
      }
      case 'compaction_trigger':
        // The route takes a trigger off the end of the input (compaction-events.ts).
        throw invalidInput(path, 'a compaction_trigger item must be the last input item');
      case 'compaction': {
        // A summary the gateway made reads as a user message on any channel; an upstream's
        // encrypted one goes back to that upstream (responses-compact.ts).
        const summary = readSummaryToken(item.encrypted_content);
        if (summary !== undefined) {
          messages.push(summaryMessage(summary));
          origins.push(path);
          break;
        }
        opaque.push(
          placedPart(
            item.encrypted_content,
            (kind) => kind === 'responses_compaction',
            messages.length,
            path,
          ),
        );
        break;
      }
    }
    reasoningPending = false;
    reasoningText = [];
    // A signature belongs to the call right after it; any other item leaves it behind.
    signature = undefined;
  }
  const chat: Record<string, unknown> = { model: body.model, messages };
  const set = (name: string, value: unknown) => {
    if (value !== undefined && value !== null) chat[name] = value;
  };
  set('stream', body.stream);
  set('max_completion_tokens', body.max_output_tokens);
  set('temperature', body.temperature);
  set('top_p', body.top_p);
  set('user', body.user);
  set('safety_identifier', body.safety_identifier);
  set('prompt_cache_key', body.prompt_cache_key);
  set('service_tier', body.service_tier);
  set('parallel_tool_calls', body.parallel_tool_calls);
  set('reasoning_effort', body.reasoning?.effort);
  set('verbosity', body.text?.verbosity);
  set('response_format', responseFormat(body));
  if (body.tools !== undefined && body.tools !== null && body.tools.length > 0)
    chat['tools'] = body.tools.map((tool) => ({
      type: 'function',
      function: withoutNulls({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        strict: tool.strict,
      }),
    }));
  set('tool_choice', toolChoice(body.tool_choice));
  const dropped = [
    ...(body.client_metadata != null ? ['client_metadata'] : []),
    ...(items.some(
      ({ item }) =>
        item.type === 'message' && item.internal_chat_message_metadata_passthrough != null,
    )
      ? ['input.internal_chat_message_metadata_passthrough']
      : []),
    ...(body.reasoning?.summary != null ? ['reasoning.summary'] : []),
    ...(body.reasoning?.generate_summary != null ? ['reasoning.generate_summary'] : []),
  ];
  return {
    body: chat,
    dropped,
    opaque,
    fieldName: (field) => callerField(field, origins, callOrigins, signatureOrigins),
  };
}

/**
 * The text of a reasoning item the gateway made from a chat upstream's `reasoning_content`: its
 * `reasoning_text` content as the gateway gave it, else its summary (a caller may keep only that).
 */
function reasoningTextOf(item: Extract<ResponsesInputItem, { type: 'reasoning' }>): string {
  const content = (item.content ?? []).map((part) => part.text).filter((text) => text !== '');
  if (content.length > 0) return content.join('');
  return item.summary
    .map((part) => part.text)
    .filter((text) => text !== '')
    .join('\n\n');
}

/**
 * A sealed part the caller sent back, placed before the chat message at `messageIndex`: 400 when
 * this gateway did not make it, or made it as a kind of part this item cannot carry.
 */
function placedPart(
  sealed: string,
  carries: (kind: OpaqueKind) => boolean,
  messageIndex: number,
  path: string,
): PlacedOpaquePart {
  const part = readOpaqueToken(sealed);
  if (part === undefined || !carries(part.kind))
    throw invalidInput(
      `${path}.encrypted_content`,
      'was not made through this gateway: encrypted content can only go back to the upstream that made it, through the channel that made it',
    );
  return { ...part, messageIndex, path: `${path}.encrypted_content` };
}

function chatMessage(
  role: 'user' | 'assistant' | 'system' | 'developer',
  content: string | ResponsesContentPart[],
  path: string,
): ChatMessage {
  if (typeof content === 'string') return { role, content };
  if (role === 'assistant') {
    // An assistant turn's parts are its output text (and refusals), read back as one text.
    return {
      role,
      content: content
        .map((part, index) => {
          if (part.type === 'output_text') return part.text;
          if (part.type === 'refusal') return part.refusal;
          throw invalidInput(
            `${path}.content.${index}.type`,
            'an assistant message holds output_text or refusal parts',
          );
        })
        .join(''),
    };
  }
  return {
    role,
    content: content.map((part, index) => {
      const at = `${path}.content.${index}`;
      switch (part.type) {
        case 'input_text':
          return { type: 'text', text: part.text };
        case 'input_image':
          if (part.image_url === undefined || part.image_url === null)
            throw invalidInput(
              `${at}.file_id`,
              'file ids are not served: send image_url (a data URI or a URL)',
            );
          return {
            type: 'image_url',
            image_url: withoutNulls({ url: part.image_url, detail: part.detail }),
          };
        default:
          throw invalidInput(
            `${at}.type`,
            `a ${role} message holds input_text or input_image parts`,
          );
      }
    }),
  };
}

function toolText(part: ResponsesContentPart, at: string): { type: 'text'; text: string } {
  if (part.type === 'input_text') return { type: 'text', text: part.text };
  throw invalidInput(`${at}.type`, 'a function_call_output carries text only');
}

function responseFormat(body: ResponsesBody): Record<string, unknown> | undefined {
  const format = body.text?.format;
  if (format === undefined || format === null || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    json_schema: withoutNulls({
      name: format.name,
      schema: format.schema,
      description: format.description,
      strict: format.strict,
    }),
  };
}

function toolChoice(choice: ResponsesBody['tool_choice']): unknown {
  if (choice === undefined || choice === null || typeof choice === 'string') return choice;
  if (choice.type === 'function') return { type: 'function', function: { name: choice.name } };
  return {
    type: 'allowed_tools',
    allowed_tools: {
      mode: choice.mode,
      tools: choice.tools.map((tool) => ({ type: 'function', function: { name: tool.name } })),
    },
  };
}

function withoutNulls(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined && value !== null),
  );
}

/** Chat field prefixes and their Responses names, longest first. */
const RENAMED: readonly [string, string][] = [
  ['response_format.json_schema', 'text.format'],
  ['response_format', 'text.format'],
  ['max_completion_tokens', 'max_output_tokens'],
  ['max_tokens', 'max_output_tokens'],
  ['reasoning_effort', 'reasoning.effort'],
  ['verbosity', 'text.verbosity'],
  ['tool_choice.function', 'tool_choice'],
  ['tool_choice.allowed_tools', 'tool_choice'],
];

function callerField(
  field: string,
  origins: readonly string[],
  callOrigins: ReadonlyMap<number, readonly string[]>,
  signatureOrigins: ReadonlyMap<string, string>,
): string {
  const message = /^messages\.(\d+)(?:\.tool_calls\.(\d+)(?:\.function)?)?(.*)$/.exec(field);
  if (message !== null) {
    const index = Number(message[1]);
    const signature = signatureOrigins.get(`${index}:${message[2]}`);
    if (signature !== undefined && (message[3] ?? '').startsWith('.extra_content'))
      return signature;
    const call =
      message[2] === undefined ? undefined : callOrigins.get(index)?.[Number(message[2])];
    const origin = call ?? origins[index];
    return origin === undefined ? field : `${origin}${message[3] ?? ''}`;
  }
  if (field === 'messages') return 'input';
  const tool = /^tools\.(\d+)\.function(.*)$/.exec(field);
  if (tool !== null) return `tools.${tool[1]}${tool[2] ?? ''}`;
  for (const [chat, responses] of RENAMED)
    if (field === chat || field.startsWith(`${chat}.`))
      return `${responses}${field.slice(chat.length)}`;
  return field;
}

/** The same error with its field named as the caller sent it. */
export function renamedField(error: unknown, fieldName: (field: string) => string): unknown {
  if (!(error instanceof ApiError) || error.param === undefined) return error;
  const renamed = fieldName(error.param);
  if (renamed === error.param) return error;
  const message = error.message.startsWith(error.param)
    ? `${renamed}${error.message.slice(error.param.length)}`
    : error.message;
  return new ApiError(error.code, message, renamed, error.headers);
}
