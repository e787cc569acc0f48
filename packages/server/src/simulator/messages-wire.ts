import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Directives } from './directives.js';
import type { OpaqueState } from './opaque-state.js';
import type { CacheUsage } from './prompt-cache.js';
import { sendEvents, slices, words } from './sse.js';
import type { TurnAnswer } from './turn.js';

const STOP_REASONS = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  stop_sequence: 'stop_sequence',
} as const;

type Block = Record<string, unknown> & { type: string };

interface MessagesUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  output_tokens: number;
  service_tier: string;
}

export interface MessageObject {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: Block[];
  stop_reason: (typeof STOP_REASONS)[keyof typeof STOP_REASONS];
  stop_sequence: string | null;
  usage?: MessagesUsage;
}

/**
 * Anthropic's message: a `thinking` block (its `signature` made for this caller's organisation)
 * when thinking is on, the text, or the `tool_use`. `input_tokens` excludes what the prompt cache
 * read or wrote, as Anthropic's does.
 */
export function messageObject(
  model: string,
  answer: TurnAnswer,
  cache: CacheUsage,
  signer: { state: OpaqueState; callerKey: string },
  /** The tier the usage names (`[sim:service_tier=…]`), `standard` unless asked. */
  serviceTier = 'standard',
): MessageObject {
  const content: Block[] = [];
  if (answer.reasoning !== undefined)
    content.push({
      type: 'thinking',
      thinking: answer.reasoning,
      signature: signer.state.sign('messages.thinking', signer.callerKey, answer.reasoning),
    });
  if (answer.content !== null && answer.content !== '')
    content.push({ type: 'text', text: answer.content });
  if (answer.toolCall !== undefined)
    content.push({
      type: 'tool_use',
      id: `toolu_${answer.toolCall.id.replace(/^call_/, '')}`,
      name: answer.toolCall.name,
      input: JSON.parse(answer.toolCall.arguments) as unknown,
    });
  const usage = answer.usage;
  const cached = cache.read + cache.created5m + cache.created1h;
  return {
    id: `msg_${randomBytes(12).toString('hex')}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: STOP_REASONS[answer.finish],
    stop_sequence: answer.stopSequence ?? null,
    ...(usage === undefined
      ? {}
      : {
          usage: {
            input_tokens: Math.max(0, usage.input - cached),
            cache_creation_input_tokens: cache.created5m + cache.created1h,
            cache_read_input_tokens: cache.read,
            cache_creation: {
              ephemeral_5m_input_tokens: cache.created5m,
              ephemeral_1h_input_tokens: cache.created1h,
            },
            output_tokens: usage.output,
            service_tier: serviceTier,
          },
        }),
  };
}

type StreamEvent = { type: string } & Record<string, unknown>;

/**
 * Streams the message as Anthropic does: `message_start` (usage with the input tokens), then per
 * block `content_block_start`, its deltas (`thinking_delta` then `signature_delta`,
 * `text_delta`, `input_json_delta`) and `content_block_stop` — a `ping` after the first start —
 * then `message_delta` (stop reason, output tokens and the cache fields) and `message_stop`.
 * A failure mid-stream (`[sim:error_after=N]`) is an `error` event.
 */
export async function streamMessage(
  response: ServerResponse,
  message: MessageObject,
  directives: Directives,
): Promise<void> {
  const { usage, content, ...head } = message;
  function* events(): Generator<StreamEvent> {
    yield {
      type: 'message_start',
      message: {
        ...head,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        ...(usage === undefined
          ? {}
          : { usage: { ...usage, output_tokens: Math.min(1, usage.output_tokens) } }),
      },
    };
    for (const [index, block] of content.entries()) yield* blockEvents(block, index);
    if (content.length === 0) yield { type: 'ping' };
    yield {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
      ...(usage === undefined
        ? {}
        : {
            usage: {
              input_tokens: usage.input_tokens,
              cache_creation_input_tokens: usage.cache_creation_input_tokens,
              cache_read_input_tokens: usage.cache_read_input_tokens,
              output_tokens: usage.output_tokens,
            },
          }),
    };
    yield { type: 'message_stop' };
  }
  const frame = (event: StreamEvent) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
  await sendEvents(response, events(), directives, {
    format: frame,
    failure: () =>
      frame({
        type: 'error',
        error: { type: 'overloaded_error', message: 'simulated failure mid-stream' },
      }),
    ending: '',
  });
}

/** One block's events; the first block's start is followed by Anthropic's `ping`. */
function* blockEvents(block: Block, index: number): Generator<StreamEvent> {
  const ping = index === 0 ? [{ type: 'ping' }] : [];
  if (block.type === 'thinking') {
    yield {
      type: 'content_block_start',
      index,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    };
    yield* ping;
    for (const piece of words(String(block['thinking'])))
      yield {
        type: 'content_block_delta',
        index,
        delta: { type: 'thinking_delta', thinking: piece },
      };
    yield {
      type: 'content_block_delta',
      index,
      delta: { type: 'signature_delta', signature: block['signature'] },
    };
  } else if (block.type === 'text') {
    yield { type: 'content_block_start', index, content_block: { type: 'text', text: '' } };
    yield* ping;
    for (const piece of words(String(block['text'])))
      yield { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } };
  } else {
    yield {
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id: block['id'], name: block['name'], input: {} },
    };
    yield* ping;
    yield {
      type: 'content_block_delta',
      index,
      delta: { type: 'input_json_delta', partial_json: '' },
    };
    for (const piece of slices(JSON.stringify(block['input']), 16))
      yield {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: piece },
      };
  }
  yield { type: 'content_block_stop', index };
}
