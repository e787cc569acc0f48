import type { OpaqueState } from './opaque-state.js';
import { imageOfUrl, type Turn, type TurnMessage } from './turn.js';
import { shown, WireError } from './wire-error.js';

/**
 * The end of a cacheable prefix: the block that carried `cache_control`, in Anthropic's order
 * (tools, then system, then messages). `texts` and `images` count what the prefix holds of the
 * turn's texts and images; `digest` names its content (model included).
 */
export interface CacheBreakpoint {
  texts: number;
  images: number;
  digest: string;
  ttl: '5m' | '1h';
}

export interface MessagesInput extends Turn {
  stream: boolean;
  breakpoints: CacheBreakpoint[];
}

/** The caller whose thinking signatures are checked. */
export interface ThinkingCheck {
  state: OpaqueState;
  callerKey: string;
}

/**
 * The content blocks of an Anthropic Messages request, and Anthropic's rules on thinking across
 * turns. Shared by `messages-request.ts`.
 */
type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const THINKING_DOCS = 'https://docs.claude.com/en/docs/build-with-claude/extended-thinking';
export const refuse = (message: string) => new WireError(message);

/**
 * One content block of a message, into the turn: its text in `own` (the message's texts), a
 * tool result in `results`, an image in the turn's images. A thinking block's signature, and a
 * redacted one's data, must verify for the caller (opaque-state.ts). Throws `WireError`.
 */
export function readBlock(
  turn: MessagesInput,
  block: Json,
  role: 'user' | 'assistant',
  at: string,
  check: ThinkingCheck,
  own: number[],
  results: TurnMessage[],
): void {
  const type = block['type'];
  const onlyFor = (wanted: 'user' | 'assistant') => {
    if (role !== wanted)
      throw refuse(`${at}: \`${shown(type)}\` blocks may only appear in \`${wanted}\` messages`);
  };
  switch (type) {
    case 'text':
      if (typeof block['text'] !== 'string') throw refuse(`${at}.text: Field required`);
      if (block['text'] === '') throw refuse('messages: text content blocks must be non-empty');
      own.push(turn.texts.push(block['text']) - 1);
      return;
    case 'image':
      turn.images.push(imageOfSource(block['source'], at));
      return;
    case 'tool_use':
      onlyFor('assistant');
      if (typeof block['id'] !== 'string' || typeof block['name'] !== 'string')
        throw refuse(`${at}: \`tool_use\` blocks need \`id\` and \`name\``);
      if (!isObject(block['input']))
        throw refuse(`${at}.input: Input should be a valid dictionary`);
      own.push(turn.texts.push(`${block['name']} ${JSON.stringify(block['input'])}`) - 1);
      return;
    case 'tool_result': {
      onlyFor('user');
      if (typeof block['tool_use_id'] !== 'string')
        throw refuse(`${at}.tool_use_id: Field required`);
      const text = toolResultText(turn, block['content'], at);
      results.push({ role: 'tool', texts: [turn.texts.push(text) - 1], toolResult: text });
      return;
    }
    case 'thinking':
      onlyFor('assistant');
      if (typeof block['thinking'] !== 'string') throw refuse(`${at}.thinking: Field required`);
      if (
        !check.state.verify(
          'messages.thinking',
          check.callerKey,
          block['thinking'],
          block['signature'],
        )
      )
        throw refuse(`${at}: Invalid \`signature\` in \`thinking\` block`);
      own.push(turn.texts.push(block['thinking']) - 1);
      return;
    case 'redacted_thinking':
      onlyFor('assistant');
      // The simulator never redacts, so no `data` of its own exists: any is foreign.
      if (check.state.open('messages.thinking', check.callerKey, block['data']) === undefined)
        throw refuse(`${at}: Invalid \`data\` in \`redacted_thinking\` block`);
      return;
    default:
      throw refuse(
        `${at}: Input tag '${shown(type)}' found using 'type' does not match any of the expected tags: 'text', 'image', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking'`,
      );
  }
}

function imageOfSource(source: unknown, at: string) {
  if (isObject(source) && source['type'] === 'base64' && typeof source['data'] === 'string') {
    const mediaType = typeof source['media_type'] === 'string' ? source['media_type'] : '';
    return { mediaType, bytes: Buffer.from(source['data'], 'base64') };
  }
  if (isObject(source) && source['type'] === 'url' && typeof source['url'] === 'string')
    return imageOfUrl(source['url']);
  throw refuse(`${at}.source: Input should be a base64 or url image source`);
}

function toolResultText(turn: MessagesInput, content: unknown, at: string): string {
  if (content === undefined || typeof content === 'string') return content ?? '';
  if (!Array.isArray(content)) throw refuse(`${at}.content: Input should be a string or a list`);
  const texts: string[] = [];
  for (const [index, part] of content.entries()) {
    if (isObject(part) && part['type'] === 'text' && typeof part['text'] === 'string')
      texts.push(part['text']);
    else if (isObject(part) && part['type'] === 'image')
      turn.images.push(imageOfSource(part['source'], `${at}.content.${index}`));
    else throw refuse(`${at}.content.${index}: Input should be a text or image block`);
  }
  return texts.join(' ');
}

/**
 * Anthropic's rules on thinking across turns: with thinking on, the last assistant message, when
 * it holds `tool_use`, must start with its thinking block; with thinking off, an assistant
 * message in the final position may not hold one.
 */
export function checkThinkingTurns(messages: Json[], thinking: boolean): void {
  const blocksOf = (message: Json | undefined): Json[] =>
    Array.isArray(message?.['content']) ? (message['content'] as unknown[]).filter(isObject) : [];
  const isThinking = (block: Json | undefined) =>
    block?.['type'] === 'thinking' || block?.['type'] === 'redacted_thinking';
  let last = messages.length - 1;
  while (last >= 0 && messages[last]?.['role'] !== 'assistant') last -= 1;
  if (last < 0) return;
  const blocks = blocksOf(messages[last]);
  if (thinking && blocks.some((block) => block['type'] === 'tool_use') && !isThinking(blocks[0]))
    throw refuse(
      `messages.${last}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${shown(blocks[0]?.['type'])}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at ${THINKING_DOCS}`,
    );
  const position = blocks.findIndex(isThinking);
  if (!thinking && last === messages.length - 1 && position >= 0)
    throw refuse(
      `messages.${last}.content.${position}: When thinking is disabled, an \`assistant\` message in the final position cannot contain \`thinking\`. To use thinking blocks, enable \`thinking\` in your request.`,
    );
}
