import type {
  AnthropicContentBlock,
  AnthropicMessage,
  AnthropicStreamEvent,
} from '@tollgate/protocol';
import type { ChatUsage } from '../../../chat/chat-types.js';
import type { AnswerSeen } from '../../../chat/zero-completion.js';
import type { UpstreamChunk } from '../../../providers/openai-compatible/chat-schemas.js';
import { thoughtSignatureOf } from '../../../providers/openai-compatible/thought-signatures.js';
import type { SseFrame } from '../../sse.js';
import { UnpresentableChunk, type AnswerNames, type StreamPresenter } from '../chat-dialect.js';
import { anthropicStreamError } from './anthropic-errors.js';
import { messageOf, toolInput } from './messages-answer.js';
import { carriedThinkingSignature, tollgateSignature } from './thinking-signature.js';
import type { ThinkingShown } from './messages-answer.js';
import type { OpaqueOutput } from '../../../chat/opaque-parts.js';

const ZERO_USAGE: ChatUsage = {
  promptTokens: 0,
  completionTokens: 0,
  cachedTokens: 0,
  reasoningTokens: 0,
};

/** A tool call being streamed as a tool_use block. */
interface OpenTool {
  readonly kind: 'tool_use';
  readonly index: number;
  readonly chatIndex: number;
  readonly id: string;
  readonly name: string;
  arguments: string;
}

type OpenBlock =
  | {
      readonly kind: 'thinking';
      readonly index: number;
      thinking: string;
      /** Thinking not shown (`display: "omitted"`): carried in the signature instead. */
      hidden?: string;
      /** The upstream's sealed thinking (chat/opaque-parts.ts): its token is the signature. */
      sealed?: OpaqueOutput;
    }
  | { readonly kind: 'text'; readonly index: number; text: string }
  | OpenTool;

/**
 * One streamed answer as Anthropic names its events: `message_start` and a `ping` as soon as the
 * upstream is open; then per content block `content_block_start`, its deltas
 * (`thinking_delta` then `signature_delta`, `text_delta`, `input_json_delta`) and
 * `content_block_stop`, indexed from 0 in order; then `message_delta` (stop reason, usage) and
 * `message_stop`. Every frame is named: Anthropic's SDK skips a frame without an event name.
 *
 * A block is closed when the next kind of output begins, and at the latest at the finish reason
 * or the usage chunk, which always pass through `relay` before the stream can complete: so every
 * tool call's arguments are checked (a JSON object) before its block stops and before the stream
 * may succeed. Arguments that are not one end the stream as an unverifiable chunk
 * (`UnpresentableChunk`: submission_unknown, hold kept, an `event: error`).
 */
export class MessagesStream implements StreamPresenter {
  chunks = 0;
  private readonly blocks: AnthropicContentBlock[] = [];
  private open: OpenBlock | undefined;
  /** Chat tool call indexes whose block has stopped: their arguments may not continue. */
  private readonly closedTools = new Set<number>();
  private finishReason: string | null = null;

  constructor(
    private readonly names: AnswerNames,
    private readonly thinking: ThinkingShown = { shown: true },
  ) {}

  opening(): SseFrame[] {
    const start: AnthropicMessage = messageOf(this.names, [], null, ZERO_USAGE);
    return [frame({ type: 'message_start', message: start }), frame({ type: 'ping' })];
  }

  relay(chunk: UpstreamChunk, opaque: readonly OpaqueOutput[] = []): SseFrame[] {
    const frames: SseFrame[] = [];
    // A chat-completions answer here has one choice (`n` is 1).
    const choice = chunk.choices[0];
    if (choice !== undefined) {
      this.chunks += 1;
      const delta = choice.delta;
      const reasoning = delta.reasoning_content ?? '';
      if (reasoning !== '') frames.push(...this.thinkingDelta(reasoning));
      const text = (delta.content ?? '') + (delta.refusal ?? '');
      if (text !== '') frames.push(...this.textDelta(text));
      for (const call of delta.tool_calls ?? []) frames.push(...this.toolDelta(call));
      if (choice.finish_reason != null) {
        this.finishReason = choice.finish_reason;
        frames.push(...this.close());
      }
    }
    for (const part of opaque) frames.push(...this.seal(part));
    if (chunk.usage != null) frames.push(...this.close());
    return frames;
  }

  /**
   * An upstream's sealed thinking ends the thinking block its text went into (or is a block of
   * its own: redacted thinking, or thinking whose text is not shown), with the token as its
   * signature (or as redacted thinking's `data`), so the caller can give it back unchanged.
   */
  private seal(part: OpaqueOutput): SseFrame[] {
    if (part.kind === 'anthropic_redacted_thinking') {
      const frames = this.close();
      const index = this.blocks.length;
      const block: AnthropicContentBlock = { type: 'redacted_thinking', data: part.token };
      frames.push(frame({ type: 'content_block_start', index, content_block: block }));
      frames.push(frame({ type: 'content_block_stop', index }));
      this.blocks.push(block);
      return frames;
    }
    const open = this.open;
    if (open?.kind === 'thinking' && open.sealed === undefined) {
      open.sealed = part;
      return this.close();
    }
    const frames = this.close();
    const block: OpenBlock = {
      kind: 'thinking',
      index: this.blocks.length,
      thinking: '',
      sealed: part,
    };
    frames.push(this.begin(block));
    if (this.thinking.shown && part.text !== '') {
      block.thinking = part.text;
      frames.push(
        frame({
          type: 'content_block_delta',
          index: block.index,
          delta: { type: 'thinking_delta', thinking: part.text },
        }),
      );
    }
    frames.push(...this.close());
    return frames;
  }

  seen(completionTokens: number | undefined): AnswerSeen {
    return {
      producedOutput: this.blocks.length > 0 || this.open !== undefined,
      finishReason: this.finishReason,
      completionTokens,
    };
  }

  assembled(usage: ChatUsage): AnthropicMessage {
    return messageOf(this.names, [...this.blocks], this.finishReason, usage);
  }

  completed(usage: ChatUsage): SseFrame[] {
    const message = this.assembled(usage);
    return [
      // The usage chunk closed every block already (see the class comment).
      ...this.close(),
      frame({
        type: 'message_delta',
        delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
        usage: message.usage,
      }),
      frame({ type: 'message_stop' }),
    ];
  }

  failed(errorBody: unknown): SseFrame[] {
    return [frame(anthropicStreamError(errorBody))];
  }

  private thinkingDelta(thinking: string): SseFrame[] {
    const frames: SseFrame[] = [];
    let open = this.open;
    if (open?.kind !== 'thinking') {
      frames.push(...this.close());
      open = { kind: 'thinking', index: this.blocks.length, thinking: '' };
      frames.push(this.begin(open));
    }
    if (!this.thinking.shown) {
      // Not shown: the block's text stays empty and its signature carries it (close()).
      open.hidden = (open.hidden ?? '') + thinking;
      return frames;
    }
    open.thinking += thinking;
    frames.push(
      frame({
        type: 'content_block_delta',
        index: open.index,
        delta: { type: 'thinking_delta', thinking },
      }),
    );
    return frames;
  }

  private textDelta(text: string): SseFrame[] {
    const frames: SseFrame[] = [];
    let open = this.open;
    if (open?.kind !== 'text') {
      frames.push(...this.close());
      open = { kind: 'text', index: this.blocks.length, text: '' };
      frames.push(this.begin(open));
    }
    open.text += text;
    frames.push(
      frame({
        type: 'content_block_delta',
        index: open.index,
        delta: { type: 'text_delta', text },
      }),
    );
    return frames;
  }

  private toolDelta(
    call: NonNullable<UpstreamChunk['choices'][number]['delta']['tool_calls']>[number],
  ): SseFrame[] {
    if (this.closedTools.has(call.index))
      throw new UnpresentableChunk(
        `tool call ${call.index} went on after the next block began; a tool_use block cannot be reopened`,
      );
    const frames: SseFrame[] = [];
    let open = this.open;
    if (open?.kind !== 'tool_use' || open.chatIndex !== call.index) {
      const id = call.id ?? '';
      const name = call.function?.name ?? '';
      if (id === '' || name === '')
        throw new UnpresentableChunk(`tool call ${call.index} began without an id and a name`);
      frames.push(...this.close());
      // Gemini's thought signature comes whole with the call's first delta (as Gemini sends it):
      // its block goes just before the tool_use (messages-answer.ts `thoughtSignatureBlock`).
      const signature = thoughtSignatureOf(call);
      if (signature !== undefined) frames.push(...this.signatureBlock(signature));
      open = {
        kind: 'tool_use',
        index: this.blocks.length,
        chatIndex: call.index,
        id,
        name,
        arguments: '',
      };
      frames.push(this.begin(open));
    } else if ((call.function?.name ?? '') !== '') {
      throw new UnpresentableChunk(`tool call ${call.index} changed its name after it began`);
    }
    const partial = call.function?.arguments ?? '';
    if (partial !== '') {
      open.arguments += partial;
      frames.push(
        frame({
          type: 'content_block_delta',
          index: open.index,
          delta: { type: 'input_json_delta', partial_json: partial },
        }),
      );
    }
    return frames;
  }

  /** A thinking block without text whose signature is a sealed thought signature, whole. */
  private signatureBlock(token: string): SseFrame[] {
    const block: OpenBlock = {
      kind: 'thinking',
      index: this.blocks.length,
      thinking: '',
      sealed: { token, kind: 'gemini_thought_signature', text: '' },
    };
    return [this.begin(block), ...this.close()];
  }

  /** Opens `block` (the open one was closed first): its `content_block_start`. */
  private begin(block: OpenBlock): SseFrame {
    this.open = block;
    const contentBlock: AnthropicContentBlock =
      block.kind === 'thinking'
        ? { type: 'thinking', thinking: '', signature: '' }
        : block.kind === 'text'
          ? { type: 'text', text: '' }
          : { type: 'tool_use', id: block.id, name: block.name, input: {} };
    return frame({ type: 'content_block_start', index: block.index, content_block: contentBlock });
  }

  /** Stops the open block, if any: a thinking block gets its signature first; a tool use is checked. */
  private close(): SseFrame[] {
    const open = this.open;
    if (open === undefined) return [];
    const frames: SseFrame[] = [];
    if (open.kind === 'thinking') {
      const signature =
        open.sealed?.token ??
        (open.hidden === undefined
          ? tollgateSignature(open.thinking)
          : carriedThinkingSignature(open.hidden));
      frames.push(
        frame({
          type: 'content_block_delta',
          index: open.index,
          delta: { type: 'signature_delta', signature },
        }),
      );
      this.blocks.push({ type: 'thinking', thinking: open.thinking, signature });
    } else if (open.kind === 'text') {
      this.blocks.push({ type: 'text', text: open.text });
    } else {
      const input = toolInput(open.arguments);
      if (input === undefined)
        throw new UnpresentableChunk(
          `tool call ${open.id} has arguments that are not a JSON object; a tool_use input must be one`,
        );
      this.closedTools.add(open.chatIndex);
      this.blocks.push({ type: 'tool_use', id: open.id, name: open.name, input });
    }
    this.open = undefined;
    frames.push(frame({ type: 'content_block_stop', index: open.index }));
    return frames;
  }
}

/** A named frame: its event name is its `type`, as Anthropic sends them. */
function frame(event: AnthropicStreamEvent): SseFrame {
  return { event: event.type, data: JSON.stringify(event) };
}
