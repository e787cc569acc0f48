import { invalidInput } from '../../../errors/api-error.js';
import type {
  AssistantBlock,
  CountTokensBody,
  MessagesBody,
  ToolResultBlock,
  UserBlock,
} from './messages-request.js';
import { carriedThinking, isTollgateSignature } from './thinking-signature.js';
import { readOpaqueToken, type PlacedOpaquePart } from '../../../chat/opaque-parts.js';
import { thoughtSignatureExtra } from '../../../providers/openai-compatible/thought-signatures.js';

/**
 * A parsed Messages body translated into the internal request, an OpenAI chat-completions body
 * (docs/anthropic-messages.md, "Translation"), with what is needed to name the caller's own
 * fields in the chat validator's errors, and the fields dropped by a documented rule.
 */
export interface ChatTranslation {
  readonly body: Record<string, unknown>;
  readonly origins: ChatOrigins;
  /** Named in `X-Tollgate-Dropped-Fields`. */
  readonly dropped: readonly string[];
  /** Thinking an upstream sealed (`tgo1.` tokens), going back to the channel that made it. */
  readonly opaque: readonly PlacedOpaquePart[];
}

/** Where each part of the chat body came from in the Messages body. */
export interface ChatOrigins {
  /** One per chat message, in order. */
  readonly messages: readonly MessageOrigin[];
  /** The Messages field that set `reasoning_effort`. */
  readonly effortFrom: 'thinking' | 'output_config.effort' | undefined;
}

export interface MessageOrigin {
  /** `system`, `messages.3`, or `messages.3.content.1` for a tool message made of a tool_result. */
  readonly path: string;
  /** Where the chat message's `content` came from (a string, or the tool result's content). */
  readonly contentPath: string;
  /** For each chat content part: the Messages block it was made of. */
  readonly parts: readonly string[];
  /** For each chat tool call: the tool_use block it was made of. */
  readonly toolCalls: readonly string[];
  /** For a chat tool call given a thought signature: the signature of the block it came in. */
  readonly signatures?: readonly (string | undefined)[];
}

type ChatMessage = Record<string, unknown>;
type ChatPart = Record<string, unknown>;

/** A generation body, or a count's (which has no generation fields). */
type TranslatedBody = CountTokensBody & Partial<MessagesBody>;

/**
 * Thinking budgets to chat's `reasoning_effort`: below 4,096 tokens `low`, below 16,384
 * `medium`, else `high` (docs/anthropic-messages.md, "Thinking").
 */
const EFFORT_BY_BUDGET = [
  { below: 4_096, effort: 'low' },
  { below: 16_384, effort: 'medium' },
] as const;

export function toChatBody(body: TranslatedBody): ChatTranslation {
  const messages: ChatMessage[] = [];
  const opaque: PlacedOpaquePart[] = [];
  const origins: MessageOrigin[] = [];
  const push = (
    message: ChatMessage,
    origin: Omit<MessageOrigin, 'contentPath'> & { contentPath?: string },
  ) => {
    messages.push(message);
    origins.push({ contentPath: `${origin.path}.content`, ...origin });
  };
  let cacheHints = body.cache_control != null;

  if (body.system !== undefined) {
    if (typeof body.system === 'string') {
      push(
        { role: 'system', content: body.system },
        { path: 'system', contentPath: 'system', parts: [], toolCalls: [] },
      );
    } else if (body.system.length > 0) {
      cacheHints ||= body.system.some((block) => block.cache_control != null);
      push(
        {
          role: 'system',
          content: body.system.map((block) => ({ type: 'text', text: block.text })),
        },
        {
          path: 'system',
          contentPath: 'system',
          parts: body.system.map((_, index) => `system.${index}`),
          toolCalls: [],
        },
      );
    }
  }

  body.messages.forEach((message, index) => {
    const path = `messages.${index}`;
    if (typeof message.content === 'string') {
      push({ role: message.role, content: message.content }, { path, parts: [], toolCalls: [] });
      return;
    }
    if (message.role === 'system') {
      cacheHints ||= message.content.some((block) => block.cache_control != null);
      push(
        {
          role: 'system',
          content: message.content.map((block) => ({ type: 'text', text: block.text })),
        },
        { path, parts: message.content.map((_, part) => `${path}.content.${part}`), toolCalls: [] },
      );
      return;
    }
    cacheHints ||= message.content.some(hasCacheHint);
    if (message.role === 'assistant')
      translateAssistant(message.content, path, push, (part) =>
        // Before (in) the assistant message this turn becomes: the next one pushed.
        opaque.push({ ...part, messageIndex: messages.length }),
      );
    else translateUser(message.content, path, push);
  });

  const chat: Record<string, unknown> = { model: body.model, messages };
  if (body.max_tokens !== undefined) chat['max_tokens'] = body.max_tokens;
  if (body.stream !== undefined) chat['stream'] = body.stream;
  if (body.temperature !== undefined) chat['temperature'] = body.temperature;
  if (body.top_p !== undefined) chat['top_p'] = body.top_p;
  if (body.stop_sequences !== undefined && body.stop_sequences.length > 0)
    chat['stop'] = body.stop_sequences;
  if (typeof body.metadata?.user_id === 'string') chat['user'] = body.metadata.user_id;
  if (body.tools !== undefined) {
    cacheHints ||= body.tools.some((tool) => tool.cache_control != null);
    chat['tools'] = body.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        parameters: tool.input_schema,
      },
    }));
  }
  Object.assign(chat, toolChoice(body.tool_choice));
  const effort = reasoningEffort(body);
  if (effort !== undefined) chat['reasoning_effort'] = effort.effort;
  const format = body.output_config?.format;
  if (format != null)
    chat['response_format'] = {
      type: 'json_schema',
      json_schema: { name: 'output', schema: format.schema },
    };

  const dropped = [
    ...(cacheHints ? ['cache_control'] : []),
    ...(body.service_tier === undefined ? [] : ['service_tier']),
    ...(body.context_management == null ? [] : ['context_management']),
    ...(body.tools ?? []).flatMap((tool, index) =>
      tool.defer_loading === true ? [`tools.${index}.defer_loading`] : [],
    ),
  ];
  return {
    body: chat,
    origins: { messages: origins, effortFrom: effort?.from },
    dropped,
    opaque,
  };
}

type Push = (
  message: ChatMessage,
  origin: Omit<MessageOrigin, 'contentPath'> & { contentPath?: string },
) => void;

/**
 * A user turn: its tool results first, each a `tool` message in order (the chat rule that every
 * tool call is answered before the next message), then its text and images as one user message.
 * A chat tool message carries text only: a tool result's images follow in that user message,
 * introduced by a line naming the tool use they came from.
 */
function translateUser(blocks: readonly UserBlock[], path: string, push: Push): void {
  const parts: ChatPart[] = [];
  const partPaths: string[] = [];
  blocks.forEach((block, index) => {
    const at = `${path}.content.${index}`;
    if (block.type === 'tool_result') {
      push(
        { role: 'tool', tool_call_id: block.tool_use_id, content: toolResultText(block) },
        { path: at, parts: [], toolCalls: [] },
      );
      const images = Array.isArray(block.content)
        ? block.content.flatMap((inner, innerIndex) =>
            inner.type === 'image'
              ? [{ part: imagePart(inner.source), path: `${at}.content.${innerIndex}` }]
              : [],
          )
        : [];
      if (images.length > 0) {
        parts.push({
          type: 'text',
          text: `Images from the result of tool use ${block.tool_use_id}:`,
        });
        partPaths.push(at);
        for (const image of images) {
          parts.push(image.part);
          partPaths.push(image.path);
        }
      }
      return;
    }
    parts.push(
      block.type === 'text' ? { type: 'text', text: block.text } : imagePart(block.source),
    );
    partPaths.push(at);
  });
  if (parts.length > 0)
    push({ role: 'user', content: parts }, { path, parts: partPaths, toolCalls: [] });
}

/**
 * A tool result as chat's tool message text: its text blocks joined by blank lines (some chat
 * upstreams take only a string there). `is_error` has no chat field: the text starts with
 * `Error: ` so the model still reads that the tool failed.
 */
function toolResultText(block: ToolResultBlock): string {
  const text =
    block.content === undefined
      ? ''
      : typeof block.content === 'string'
        ? block.content
        : block.content
            .flatMap((inner) => (inner.type === 'text' ? [inner.text] : []))
            .join('\n\n');
  return block.is_error === true ? `Error: ${text}` : text;
}

/**
 * An assistant turn: text blocks as text parts, tool uses as tool calls. A thinking block holding
 * a Gemini thought signature (messages-answer.ts `thoughtSignatureBlock`) goes back on the tool
 * call of the tool_use after it, still sealed (a block with no tool_use after it carries
 * nothing Gemini reads: left out). A thinking block Tollgate
 * signed (a chat upstream's `reasoning_content`) goes back as the message's `reasoning_content`
 * (several blank-line separated, as they were split); whether it is sent is the upstream's rule
 * (provider-dialects.ts `reasoningHistory`: DeepSeek and Kimi refuse a tool call without it). Any
 * other thinking block, and redacted thinking, was made by an upstream that sealed it and can
 * only go back to that channel.
 */
function translateAssistant(
  blocks: readonly AssistantBlock[],
  path: string,
  push: Push,
  keep: (part: Omit<PlacedOpaquePart, 'messageIndex'>) => void,
): void {
  const parts: ChatPart[] = [];
  const partPaths: string[] = [];
  const toolCalls: ChatPart[] = [];
  const callPaths: string[] = [];
  const reasoning: string[] = [];
  const signatures: (string | undefined)[] = [];
  /** A Gemini thought signature's block just read: it goes on the next tool_use's call. */
  let signature: { token: string; path: string } | undefined;
  blocks.forEach((block, index) => {
    const at = `${path}.content.${index}`;
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: block.text });
        partPaths.push(at);
        return;
      case 'tool_use':
        toolCalls.push({
          id: block.id,
          type: 'function',
          function: { name: block.name, arguments: JSON.stringify(block.input) },
          ...(signature === undefined
            ? {}
            : { extra_content: thoughtSignatureExtra(signature.token) }),
        });
        callPaths.push(at);
        signatures.push(signature?.path);
        signature = undefined;
        return;
      case 'thinking': {
        if (isTollgateSignature(block.thinking, block.signature)) {
          if (block.thinking !== '') reasoning.push(block.thinking);
          return;
        }
        // Thinking not shown (`display: "omitted"`): its text is in the signature.
        const carried = block.thinking === '' ? carriedThinking(block.signature) : undefined;
        if (carried !== undefined) {
          if (carried !== '') reasoning.push(carried);
          return;
        }
        const sealed = readOpaqueToken(block.signature);
        if (sealed === undefined)
          throw foreignThinking(at, 'this thinking block was not signed through this gateway');
        // Sealed still: the channel's adapter opens it, or refuses it on another channel.
        if (sealed.kind === 'gemini_thought_signature')
          signature = { token: block.signature, path: `${at}.signature` };
        else keep({ ...sealed, path: `${at}.signature` });
        return;
      }
      case 'redacted_thinking': {
        const sealed = readOpaqueToken(block.data);
        if (sealed === undefined)
          throw foreignThinking(at, 'this redacted thinking was not made through this gateway');
        keep({ ...sealed, path: `${at}.data` });
        return;
      }
    }
  });
  // A turn that held only Tollgate's thinking carries nothing a chat upstream takes.
  if (parts.length === 0 && toolCalls.length === 0) return;
  push(
    {
      role: 'assistant',
      content: parts.length > 0 ? parts : null,
      ...(reasoning.length > 0 ? { reasoning_content: reasoning.join('\n\n') } : {}),
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    },
    {
      path,
      parts: partPaths,
      toolCalls: callPaths,
      ...(signatures.some((at) => at !== undefined) ? { signatures } : {}),
    },
  );
}

function foreignThinking(path: string, what: string) {
  return invalidInput(
    path,
    `${what}; thinking can only go back to the Anthropic channel that made it, and this gateway routes back only the thinking it sealed itself. Start a new conversation, or leave the block out (docs/anthropic-messages.md, "Thinking")`,
  );
}

function imagePart(
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string },
): ChatPart {
  const url =
    source.type === 'base64' ? `data:${source.media_type};base64,${source.data}` : source.url;
  return { type: 'image_url', image_url: { url } };
}

function hasCacheHint(block: UserBlock | AssistantBlock): boolean {
  if ('cache_control' in block && block.cache_control != null) return true;
  return (
    block.type === 'tool_result' &&
    Array.isArray(block.content) &&
    block.content.some((inner) => inner.cache_control != null)
  );
}

function toolChoice(choice: TranslatedBody['tool_choice']): Record<string, unknown> {
  if (choice === undefined) return {};
  const parallel =
    'disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use === true
      ? { parallel_tool_calls: false }
      : {};
  switch (choice.type) {
    case 'auto':
      return { tool_choice: 'auto', ...parallel };
    case 'any':
      return { tool_choice: 'required', ...parallel };
    case 'tool':
      return { tool_choice: { type: 'function', function: { name: choice.name } }, ...parallel };
    case 'none':
      return { tool_choice: 'none' };
  }
}

/**
 * Chat's `reasoning_effort` for the request: `output_config.effort` as is (`max` is `xhigh`,
 * chat's highest), else from `thinking`: enabled by its budget (EFFORT_BY_BUDGET), adaptive
 * `medium`; disabled or absent sends none (the upstream's default).
 */
function reasoningEffort(
  body: TranslatedBody,
): { effort: string; from: 'thinking' | 'output_config.effort' } | undefined {
  const effort = body.output_config?.effort;
  if (effort != null)
    return { effort: effort === 'max' ? 'xhigh' : effort, from: 'output_config.effort' };
  const thinking = body.thinking;
  if (thinking === undefined || thinking.type === 'disabled') return undefined;
  if (thinking.type === 'adaptive') return { effort: 'medium', from: 'thinking' };
  if (body.max_tokens !== undefined && thinking.budget_tokens >= body.max_tokens)
    throw invalidInput('thinking.budget_tokens', 'must be less than max_tokens');
  const step = EFFORT_BY_BUDGET.find((candidate) => thinking.budget_tokens < candidate.below);
  return { effort: step?.effort ?? 'high', from: 'thinking' };
}
