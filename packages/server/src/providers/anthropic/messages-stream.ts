import { createParser } from 'eventsource-parser';
import { opaqueToken, type OpaqueOutput } from '../../chat/opaque-parts.js';
import type { StreamEvent } from '../chat-upstream.js';
import type { UpstreamChunk } from '../openai-compatible/chat-schemas.js';
import { streamEventSchema, type MessagesStreamEvent } from './messages-schemas.js';
import {
  cacheWritesOf,
  chatUsageOf,
  FINISH_REASONS,
  type MessagesTokens,
} from './messages-usage.js';
import { openAiUsage } from '../../chat/usage-fields.js';

type Delta = UpstreamChunk['choices'][number]['delta'];

/** A content block between its start and its stop. */
type OpenBlock =
  | { readonly type: 'text' }
  | { readonly type: 'thinking'; thinking: string; signature: string }
  | { readonly type: 'redacted_thinking'; readonly data: string }
  | { readonly type: 'tool_use'; readonly call: number; json: string };

/** The event types read; any other (Anthropic may add some) carries no content and is skipped. */
const KNOWN_EVENTS = new Set<string>(
  streamEventSchema.options.map((option) => option.shape.type.value),
);

/**
 * An Anthropic Messages stream as checked internal events: each SSE event parsed with its schema,
 * then read by `MessagesStreamReader`. Ends at the first event that is not a chunk (`done`,
 * `upstream_error`, `invalid`); a body that ends before `message_stop` just ends (the relay reads
 * that as a dropped stream).
 */
export async function* readMessagesStream(
  body: AsyncIterable<Buffer>,
  channel: string,
): AsyncGenerator<StreamEvent> {
  const pending: { event?: string | undefined; data: string }[] = [];
  const parser = createParser({ onEvent: (event) => void pending.push(event) });
  const reader = new MessagesStreamReader(channel);
  const decoder = new TextDecoder();
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    for (let frame = pending.shift(); frame !== undefined; frame = pending.shift()) {
      let json: unknown;
      try {
        json = JSON.parse(frame.data);
      } catch {
        yield { kind: 'invalid', detail: 'event is not JSON' };
        return;
      }
      const type = (json as { type?: unknown } | null)?.type;
      if (typeof type === 'string' && !KNOWN_EVENTS.has(type)) continue;
      const parsed = streamEventSchema.safeParse(json);
      if (!parsed.success || (frame.event !== undefined && frame.event !== parsed.data.type)) {
        const issue = parsed.success ? `named ${frame.event}` : parsed.error.issues[0]?.message;
        yield { kind: 'invalid', detail: `messages event: ${issue ?? ''}` };
        return;
      }
      for (const event of reader.read(parsed.data)) {
        yield event;
        if (event.kind !== 'chunk') return;
      }
    }
  }
}

/**
 * Reads one message's events in order into chat chunks: text deltas as `content`, thinking
 * deltas as `reasoning_content` (a blank line between two thinking blocks, as a plain answer
 * joins them), a thinking or redacted thinking block's stop as an empty chunk carrying that block
 * sealed, a `tool_use` start as a tool call (numbered in the order of tool uses) whose arguments
 * follow as `input_json_delta`s, checked to be a JSON object at its stop; the stop reason as the
 * finish chunk; at `message_stop` the usage chunk, then `done`. Usage: the input figures of
 * `message_start`, replaced by any `message_delta` gives, and the output of the last
 * `message_delta` (the count at `message_start` is not the answer's): without a `message_delta`
 * usage there is no usage chunk, and the relay reads a stream that ended without usage.
 */
export class MessagesStreamReader {
  private readonly open = new Map<number, OpenBlock>();
  private readonly seen = new Set<number>();
  private tools = 0;
  private reasoned = false;
  private roleSent = false;
  private input: Omit<MessagesTokens, 'output'> | undefined;
  private output: number | undefined;

  constructor(private readonly channel: string) {}

  read(event: MessagesStreamEvent): StreamEvent[] {
    switch (event.type) {
      case 'message_start': {
        const usage = event.message.usage;
        if (usage !== undefined)
          this.input = {
            input: usage.input_tokens,
            cacheRead: usage.cache_read_input_tokens ?? 0,
            ...cacheWritesOf(usage),
            serviceTier: usage.service_tier,
          };
        return [];
      }
      case 'content_block_start':
        return this.start(event.index, event.content_block);
      case 'content_block_delta':
        return this.delta(event.index, event.delta);
      case 'content_block_stop':
        return this.stop(event.index);
      case 'message_delta': {
        const usage = event.usage;
        if (usage !== undefined) {
          this.output = usage.output_tokens;
          const input = this.input ?? { input: 0, cacheRead: 0, cacheWrite: 0 };
          // A figure the delta leaves out stays as `message_start` gave it (the 1-hour split
          // too: Anthropic's deltas repeat the total of the writes, not always their split).
          const writes =
            usage.cache_creation_input_tokens == null && usage.cache_creation == null
              ? input
              : cacheWritesOf(usage);
          this.input = {
            input: usage.input_tokens ?? input.input,
            cacheRead: usage.cache_read_input_tokens ?? input.cacheRead,
            cacheWrite: writes.cacheWrite,
            cacheWrite1h: writes.cacheWrite1h ?? input.cacheWrite1h,
            serviceTier: input.serviceTier,
          };
        }
        const reason = event.delta.stop_reason;
        return reason === undefined || reason === null
          ? []
          : [this.chunk({}, FINISH_REASONS[reason])];
      }
      case 'message_stop':
        return this.end();
      case 'ping':
        return [];
      case 'error':
        return [{ kind: 'upstream_error' }];
    }
  }

  private start(
    index: number,
    block: Extract<MessagesStreamEvent, { type: 'content_block_start' }>['content_block'],
  ): StreamEvent[] {
    if (this.seen.has(index)) return [invalid(`block ${index} started twice`)];
    this.seen.add(index);
    switch (block.type) {
      case 'text':
        this.open.set(index, { type: 'text' });
        return block.text === '' ? [] : [this.chunk({ content: block.text })];
      case 'thinking': {
        this.open.set(index, {
          type: 'thinking',
          thinking: block.thinking,
          signature: block.signature ?? '',
        });
        const separator = this.reasoned ? '\n\n' : '';
        this.reasoned = true;
        const text = `${separator}${block.thinking}`;
        return text === '' ? [] : [this.chunk({ reasoning_content: text })];
      }
      case 'redacted_thinking':
        this.open.set(index, { type: 'redacted_thinking', data: block.data });
        return [];
      case 'tool_use': {
        const call = this.tools;
        this.tools += 1;
        this.open.set(index, { type: 'tool_use', call, json: '' });
        return [
          this.chunk({
            tool_calls: [
              {
                index: call,
                id: block.id,
                type: 'function',
                function: { name: block.name, arguments: '' },
              },
            ],
          }),
        ];
      }
    }
  }

  private delta(
    index: number,
    delta: Extract<MessagesStreamEvent, { type: 'content_block_delta' }>['delta'],
  ): StreamEvent[] {
    const block = this.open.get(index);
    if (delta.type === 'text_delta' && block?.type === 'text')
      return delta.text === '' ? [] : [this.chunk({ content: delta.text })];
    if (delta.type === 'thinking_delta' && block?.type === 'thinking') {
      block.thinking += delta.thinking;
      return delta.thinking === '' ? [] : [this.chunk({ reasoning_content: delta.thinking })];
    }
    if (delta.type === 'signature_delta' && block?.type === 'thinking') {
      block.signature += delta.signature;
      return [];
    }
    if (delta.type === 'input_json_delta' && block?.type === 'tool_use') {
      block.json += delta.partial_json;
      return delta.partial_json === ''
        ? []
        : [
            this.chunk({
              tool_calls: [{ index: block.call, function: { arguments: delta.partial_json } }],
            }),
          ];
    }
    return [invalid(`${delta.type} for block ${index}, which is ${block?.type ?? 'not open'}`)];
  }

  private stop(index: number): StreamEvent[] {
    const block = this.open.get(index);
    if (block === undefined) return [invalid(`block ${index} stopped, not open`)];
    this.open.delete(index);
    switch (block.type) {
      case 'text':
        return [];
      case 'thinking':
        return [
          this.sealed('anthropic_thinking', block.thinking, {
            type: 'thinking',
            thinking: block.thinking,
            signature: block.signature,
          }),
        ];
      case 'redacted_thinking':
        return [
          this.sealed('anthropic_redacted_thinking', '', {
            type: 'redacted_thinking',
            data: block.data,
          }),
        ];
      case 'tool_use': {
        // Empty arguments are `{}`, as in a plain answer; any others must be a JSON object.
        if (block.json.trim() === '')
          return [
            this.chunk({ tool_calls: [{ index: block.call, function: { arguments: '{}' } }] }),
          ];
        let input: unknown;
        try {
          input = JSON.parse(block.json);
        } catch {
          input = undefined;
        }
        return typeof input === 'object' && input !== null && !Array.isArray(input)
          ? []
          : [invalid(`tool_use ${index}'s input is not a JSON object`)];
      }
    }
  }

  private end(): StreamEvent[] {
    if (this.open.size > 0) return [invalid('message_stop with a block still open')];
    if (this.input === undefined || this.output === undefined) return [{ kind: 'done' }];
    const usage = chatUsageOf({ ...this.input, output: this.output });
    if (usage === undefined) return [invalid('usage beyond safe integers')];
    return [
      { kind: 'chunk', chunk: { choices: [], usage: openAiUsage(usage) }, usage },
      { kind: 'done' },
    ];
  }

  private sealed(
    kind: OpaqueOutput['kind'],
    text: string,
    payload: Record<string, unknown>,
  ): StreamEvent {
    const token = opaqueToken({ channel: this.channel, kind, payload });
    return { ...this.chunk({}), opaque: [{ token, kind, text }] };
  }

  /** One chat chunk of one choice; the first says the role, as chat streams do. */
  private chunk(delta: Delta, finishReason: string | null = null): StreamEvent & { kind: 'chunk' } {
    const withRole: Delta = this.roleSent ? delta : { role: 'assistant', ...delta };
    this.roleSent = true;
    return {
      kind: 'chunk',
      chunk: { choices: [{ index: 0, delta: withRole, finish_reason: finishReason }] },
    };
  }
}

function invalid(detail: string): StreamEvent {
  return { kind: 'invalid', detail };
}
