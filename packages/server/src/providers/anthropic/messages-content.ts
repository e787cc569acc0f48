import type { PlacedOpaquePart } from '../../chat/opaque-parts.js';
import { refuseField } from './refusal.js';
import { redactedThinkingBlockSchema, thinkingBlockSchema } from './messages-schemas.js';

type Json = Record<string, unknown>;
type Block = Json;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One Anthropic message; a user turn keeps its tool results apart, since they must come first. */
interface Turn {
  readonly role: 'user' | 'assistant';
  readonly results: Block[];
  readonly blocks: Block[];
}

/** The media types Anthropic reads in an image block. */
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/**
 * The internal chat messages (already validated: chat/validate-messages.ts) as Anthropic's
 * `system` and `messages` (docs/agents.md, "Anthropic upstreams"):
 *
 * - the leading `system` / `developer` messages become `system` text blocks; a later one becomes
 *   a user text block at its place (Anthropic's messages are `user` or `assistant` only);
 * - `tool` messages become `tool_result` blocks of one user message, first in it, merged with the
 *   user message that follows (Anthropic wants the results in the next user turn); consecutive
 *   user turns are merged the same way;
 * - the opaque parts (thinking and redacted thinking, exactly as the upstream made them) go at the
 *   start of the assistant message at their index; placed before any other message, or after the
 *   last, they make an assistant message of their own there.
 *
 * Throws `UpstreamFailure` (refusal.ts) for what Anthropic cannot take: a video, an image that is
 * not JPEG, PNG, GIF or WebP, tool-call arguments that are not a JSON object, an opaque part that
 * is not Anthropic thinking.
 */
export function toAnthropicMessages(
  messages: readonly Json[],
  opaque: readonly PlacedOpaquePart[],
): { system: Block[]; messages: Json[] } {
  const placed = placeOpaque(opaque, messages.length);
  const system: Block[] = [];
  const turns: Turn[] = [];
  let leading = true;
  messages.forEach((message, index) => {
    const path = `messages.${index}`;
    const role = message['role'];
    const parts = placed.get(index);
    if (leading && parts === undefined && (role === 'system' || role === 'developer')) {
      system.push(...textBlocks(message['content']));
      return;
    }
    leading = false;
    if (parts !== undefined && role !== 'assistant')
      turns.push({ role: 'assistant', results: [], blocks: parts });
    switch (role) {
      case 'assistant': {
        const blocks = [...(parts ?? []), ...assistantBlocks(message, path)];
        // An assistant message with nothing Anthropic takes (an empty text) is left out.
        if (blocks.length > 0) turns.push({ role: 'assistant', results: [], blocks });
        return;
      }
      case 'tool':
        userTurn(turns).results.push(toolResult(message));
        return;
      case 'user':
        userTurn(turns).blocks.push(...userBlocks(message['content'], `${path}.content`));
        return;
      default:
        // A system or developer message after the conversation began: the user's text there.
        userTurn(turns).blocks.push(...textBlocks(message['content']));
    }
  });
  const trailing = placed.get(messages.length);
  if (trailing !== undefined) turns.push({ role: 'assistant', results: [], blocks: trailing });
  return {
    system,
    messages: turns.map((turn) => ({
      role: turn.role,
      content: [...turn.results, ...turn.blocks],
    })),
  };
}

/** The user turn to add to: the last one when it is a user turn, else a new one. */
function userTurn(turns: Turn[]): Turn {
  const last = turns.at(-1);
  if (last?.role === 'user') return last;
  const turn: Turn = { role: 'user', results: [], blocks: [] };
  turns.push(turn);
  return turn;
}

/** The opaque parts by the index of the message they go before (past the end: the end). */
function placeOpaque(opaque: readonly PlacedOpaquePart[], length: number): Map<number, Block[]> {
  const placed = new Map<number, Block[]>();
  for (const part of opaque) {
    const schema =
      part.kind === 'anthropic_thinking'
        ? thinkingBlockSchema
        : part.kind === 'anthropic_redacted_thinking'
          ? redactedThinkingBlockSchema
          : undefined;
    if (schema === undefined || !schema.safeParse(part.payload).success)
      throw refuseField(
        part.path,
        `holds ${part.kind} state, which an Anthropic upstream cannot read`,
      );
    const at = Math.min(Math.max(part.messageIndex, 0), length);
    const blocks = placed.get(at) ?? [];
    // Spliced back as the upstream sent it: its signature covers it.
    blocks.push(part.payload);
    placed.set(at, blocks);
  }
  return placed;
}

/** Text content (a string or text parts) as text blocks; Anthropic refuses empty ones. */
function textBlocks(content: unknown): Block[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part: unknown) =>
    isObject(part) && typeof part['text'] === 'string' && part['text'] !== ''
      ? [{ type: 'text', text: part['text'] }]
      : [],
  );
}

function userBlocks(content: unknown, path: string): Block[] {
  if (!Array.isArray(content)) return textBlocks(content);
  return content.flatMap((part: unknown, index): Block[] => {
    if (!isObject(part)) return [];
    const at = `${path}.${index}`;
    if (part['type'] === 'image_url') return [imageBlock(part['image_url'], `${at}.image_url`)];
    if (part['type'] === 'video_url')
      throw refuseField(`${at}.type`, 'is a video, which Anthropic does not read');
    return textBlocks([part]);
  });
}

/** `image_url` (validated: a URL or a data URI) as an image block; `detail` has no equivalent. */
function imageBlock(image: unknown, path: string): Block {
  const url = isObject(image) && typeof image['url'] === 'string' ? image['url'] : '';
  if (!url.startsWith('data:')) return { type: 'image', source: { type: 'url', url } };
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  const mediaType = match?.[1]?.toLowerCase();
  if (match === null || mediaType === undefined || !IMAGE_TYPES.has(mediaType))
    throw refuseField(
      `${path}.url`,
      'must be a base64 data URI of a JPEG, PNG, GIF or WebP image for an Anthropic upstream',
    );
  return { type: 'image', source: { type: 'base64', media_type: mediaType, data: match[2] } };
}

/**
 * An assistant message's text, refusal (the model's words: as text) and tool calls. Its
 * `reasoning_content` is not sent: Anthropic takes thinking back only with the signature it made,
 * which comes back as an opaque part instead. `name` has no equivalent.
 */
function assistantBlocks(message: Json, path: string): Block[] {
  const blocks = textBlocks(message['content']);
  const refusal = message['refusal'];
  if (blocks.length === 0 && typeof refusal === 'string' && refusal !== '')
    blocks.push({ type: 'text', text: refusal });
  const calls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]) : [];
  calls.forEach((call, index) => {
    if (!isObject(call) || !isObject(call['function'])) return;
    const { name, arguments: text } = call['function'];
    blocks.push({
      type: 'tool_use',
      id: call['id'],
      name,
      input: toolInput(text, `${path}.tool_calls.${index}.function.arguments`),
    });
  });
  return blocks;
}

/** A tool call's arguments as Anthropic's `input`: a JSON object (empty arguments are `{}`). */
function toolInput(text: unknown, path: string): Json {
  if (typeof text !== 'string' || text.trim() === '') return {};
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    input = undefined;
  }
  if (!isObject(input))
    throw refuseField(path, "must be a JSON object: Anthropic takes a tool call's input as one");
  return input;
}

function toolResult(message: Json): Block {
  const content = message['content'];
  return {
    type: 'tool_result',
    tool_use_id: message['tool_call_id'],
    content: typeof content === 'string' ? content : textBlocks(content),
  };
}
