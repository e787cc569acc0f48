import type {
  ResponseFunctionCall,
  ResponseObject,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
} from '@tollgate/protocol';
import type { ChatUsage } from '../../../chat/chat-types.js';
import type { AnswerSeen } from '../../../chat/zero-completion.js';
import type { UpstreamChunk } from '../../../providers/openai-compatible/chat-schemas.js';
import { thoughtSignatureOf } from '../../../providers/openai-compatible/thought-signatures.js';
import type { SseFrame } from '../../sse.js';
import type { AnswerNames, StreamPresenter } from '../chat-dialect.js';
import type { OpaqueOutput } from '../../../chat/opaque-parts.js';
import {
  finishStatus,
  itemId,
  sealedReasoningItem,
  responseObject,
  responseUsage,
  type ResponseEcho,
} from './responses-answer.js';

/** One output item being streamed: what it holds so far. */
type OpenItem =
  | {
      kind: 'reasoning';
      outputIndex: number;
      id: string;
      text: string;
      /** The upstream's sealed reasoning (chat/opaque-parts.ts), once it came. */
      sealed?: OpaqueOutput;
    }
  | { kind: 'message'; outputIndex: number; id: string; text: string; refusal: string }
  | {
      kind: 'function_call';
      outputIndex: number;
      id: string;
      callId: string;
      name: string;
      arguments: string;
    };

/** A tool call whose item has not opened yet (its id or name is still to come). */
interface PendingCall {
  callId: string;
  name: string;
  arguments: string;
  /** Its sealed thought signature (Gemini), if it came with it. */
  signature?: string | undefined;
}

/**
 * A streamed Responses answer (docs/agents.md, "Responses stream"): `response.created` and
 * `response.in_progress` as soon as the upstream is open; then per output item
 * `response.output_item.added`, its part's `*.added`, the deltas, the `*.done` events and
 * `response.output_item.done` (items follow one another, never interleave: a delta of another
 * kind closes the open item); then `response.completed` (or `response.incomplete` when the
 * output cap or a filter cut the answer) carrying integer usage, or `response.failed`. Every
 * event has a `sequence_number` from 0, in the order the official SDK's stream helper accepts.
 */
export class ResponseEvents implements StreamPresenter {
  chunks = 0;
  private sequence = 0;
  private finishReason: string | null = null;
  private readonly items: OpenItem[] = [];
  /** The item deltas are going into; closed items stay in `items` for the record. */
  private open: OpenItem | undefined;
  /** Tool calls by the upstream's index, and calls whose name has not arrived yet. */
  private readonly calls = new Map<number, OpenItem & { kind: 'function_call' }>();
  private readonly pendingCalls = new Map<number, PendingCall>();

  constructor(
    protected readonly names: AnswerNames,
    protected readonly echo: ResponseEcho,
  ) {}

  opening(): SseFrame[] {
    const response = this.response('in_progress', null);
    return [
      this.event('response.created', { response }),
      this.event('response.in_progress', { response }),
    ];
  }

  relay(chunk: UpstreamChunk, opaque: readonly OpaqueOutput[] = []): SseFrame[] {
    const frames: SseFrame[] = [];
    for (const part of opaque) frames.push(...this.seal(part));
    if (chunk.choices.length === 0) return frames;
    this.chunks += 1;
    for (const choice of chunk.choices) {
      const delta = choice.delta;
      if (delta.reasoning_content)
        frames.push(...this.partDelta('reasoning', delta.reasoning_content));
      if (delta.content) frames.push(...this.partDelta('message', delta.content));
      if (delta.refusal) frames.push(...this.refusalDelta(delta.refusal));
      for (const call of delta.tool_calls ?? []) frames.push(...this.callDelta(call));
      if (choice.finish_reason !== undefined && choice.finish_reason !== null)
        this.finishReason = choice.finish_reason;
    }
    return frames;
  }

  seen(completionTokens: number | undefined): AnswerSeen {
    return {
      producedOutput: this.items.some((item) =>
        item.kind === 'function_call'
          ? true
          : item.text !== '' || (item.kind === 'message' && item.refusal !== ''),
      ),
      finishReason: this.finishReason,
      completionTokens,
    };
  }

  assembled(usage: ChatUsage): ResponseObject {
    const { status, incomplete_details } = finishStatus(this.finishReason);
    return responseObject(this.echo, this.names, {
      status,
      incomplete_details,
      error: null,
      output: this.items.map((item) => this.finished(item, status)),
      usage: responseUsage(usage),
    });
  }

  completed(usage: ChatUsage): SseFrame[] {
    const response = this.assembled(usage);
    return [
      ...this.close(),
      this.event(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', {
        response,
      }),
    ];
  }

  failed(errorBody: unknown): SseFrame[] {
    const error = (errorBody as { error?: { code?: unknown; message?: unknown } }).error;
    const response = this.response('failed', {
      code: typeof error?.code === 'string' ? error.code : 'UPSTREAM_ERROR',
      message: typeof error?.message === 'string' ? error.message : 'the response failed',
    });
    return [...this.close(), this.event('response.failed', { response })];
  }

  protected response(
    status: 'in_progress' | 'failed',
    error: ResponseObject['error'],
  ): ResponseObject {
    return responseObject(this.echo, this.names, {
      status,
      incomplete_details: null,
      error,
      output: this.items
        .filter((item) => item !== this.open)
        .map((item) => this.finished(item, 'completed')),
      usage: null,
    });
  }

  protected event(type: string, fields: Record<string, unknown>): SseFrame {
    const data = { type, sequence_number: this.sequence, ...fields };
    this.sequence += 1;
    return { event: type, data: JSON.stringify(data) };
  }

  /** Opens a new item of this kind unless the open one is of it; closes the open one first. */
  private ensure<Kind extends 'reasoning' | 'message'>(kind: Kind): SseFrame[] {
    if (this.open?.kind === kind) return [];
    const frames = this.close();
    const outputIndex = this.items.length;
    const item: OpenItem =
      kind === 'reasoning'
        ? { kind, outputIndex, id: itemId('rs', this.names.requestId, outputIndex), text: '' }
        : {
            kind: 'message',
            outputIndex,
            id: itemId('msg', this.names.requestId, outputIndex),
            text: '',
            refusal: '',
          };
    this.items.push(item);
    this.open = item;
    frames.push(
      this.event('response.output_item.added', {
        output_index: outputIndex,
        item: this.started(item),
      }),
    );
    return frames;
  }

  /**
   * An upstream's sealed reasoning ends the reasoning item its text went into (or is an item of
   * its own when no text came): the item carries it as `encrypted_content`, and closes.
   */
  private seal(part: OpaqueOutput): SseFrame[] {
    const frames = this.ensure('reasoning');
    (this.open as OpenItem & { kind: 'reasoning' }).sealed = part;
    frames.push(...this.close());
    return frames;
  }

  /**
   * A delta of the text of the open reasoning item or message (its one part, index 0), opening
   * the item and the part as needed.
   */
  private partDelta(kind: 'reasoning' | 'message', delta: string): SseFrame[] {
    const frames = this.ensure(kind);
    const item = this.open as OpenItem & { kind: 'reasoning' | 'message' };
    const at = { item_id: item.id, output_index: item.outputIndex, content_index: 0 };
    if (item.text === '')
      frames.push(
        this.event('response.content_part.added', {
          ...at,
          part:
            kind === 'reasoning'
              ? { type: 'reasoning_text', text: '' }
              : { type: 'output_text', text: '', annotations: [], logprobs: [] },
        }),
      );
    item.text += delta;
    frames.push(
      kind === 'reasoning'
        ? this.event('response.reasoning_text.delta', { ...at, delta })
        : this.event('response.output_text.delta', { ...at, delta, logprobs: [] }),
    );
    return frames;
  }

  /** A refusal is kept whole and sent as its part when the message closes. */
  private refusalDelta(delta: string): SseFrame[] {
    const frames = this.ensure('message');
    (this.open as OpenItem & { kind: 'message' }).refusal += delta;
    return frames;
  }

  private callDelta(
    call: NonNullable<UpstreamChunk['choices'][number]['delta']['tool_calls']>[number],
  ): SseFrame[] {
    const known = this.calls.get(call.index);
    if (known !== undefined) {
      const delta = call.function?.arguments ?? '';
      if (delta === '') return [];
      known.arguments += delta;
      if (this.open !== known) return [];
      return [
        this.event('response.function_call_arguments.delta', {
          item_id: known.id,
          output_index: known.outputIndex,
          delta,
        }),
      ];
    }
    // The item opens once the call's id and name are known (OpenAI sends both first).
    const pending: PendingCall = this.pendingCalls.get(call.index) ?? {
      callId: '',
      name: '',
      arguments: '',
    };
    pending.callId ||= call.id ?? '';
    pending.signature ??= thoughtSignatureOf(call);
    pending.name += call.function?.name ?? '';
    pending.arguments += call.function?.arguments ?? '';
    if (pending.callId === '' || pending.name === '') {
      this.pendingCalls.set(call.index, pending);
      return [];
    }
    this.pendingCalls.delete(call.index);
    return this.openCall(call.index, pending);
  }

  private openCall(index: number, pending: PendingCall): SseFrame[] {
    const frames = this.close();
    // Gemini's thought signature, with the call's first delta (as Gemini sends it): an item of
    // its own just before the call's (responses-answer.ts `thoughtSignatureItem`).
    if (pending.signature !== undefined)
      frames.push(
        ...this.seal({ token: pending.signature, kind: 'gemini_thought_signature', text: '' }),
      );
    const outputIndex = this.items.length;
    const item = {
      kind: 'function_call' as const,
      outputIndex,
      id: itemId('fc', this.names.requestId, outputIndex),
      callId: pending.callId,
      name: pending.name,
      arguments: '',
    };
    this.items.push(item);
    this.calls.set(index, item);
    this.open = item;
    frames.push(
      this.event('response.output_item.added', {
        output_index: outputIndex,
        item: this.started(item),
      }),
    );
    if (pending.arguments !== '') {
      item.arguments = pending.arguments;
      frames.push(
        this.event('response.function_call_arguments.delta', {
          item_id: item.id,
          output_index: outputIndex,
          delta: pending.arguments,
        }),
      );
    }
    return frames;
  }

  /** The `*.done` events of the open item, then `response.output_item.done`. */
  private close(): SseFrame[] {
    const item = this.open;
    this.open = undefined;
    if (item === undefined) return [];
    const at = { item_id: item.id, output_index: item.outputIndex };
    const frames: SseFrame[] = [];
    if (item.kind === 'reasoning' && item.text !== '') {
      frames.push(
        this.event('response.reasoning_text.done', { ...at, content_index: 0, text: item.text }),
      );
      frames.push(
        this.event('response.content_part.done', {
          ...at,
          content_index: 0,
          part: { type: 'reasoning_text', text: item.text },
        }),
      );
    }
    if (item.kind === 'message') {
      if (item.text !== '') {
        const part = { type: 'output_text', text: item.text, annotations: [], logprobs: [] };
        frames.push(
          this.event('response.output_text.done', {
            ...at,
            content_index: 0,
            text: item.text,
            logprobs: [],
          }),
        );
        frames.push(this.event('response.content_part.done', { ...at, content_index: 0, part }));
      }
      if (item.refusal !== '') {
        const contentIndex = item.text === '' ? 0 : 1;
        const part = { type: 'refusal', refusal: item.refusal };
        frames.push(
          this.event('response.content_part.added', {
            ...at,
            content_index: contentIndex,
            part: { type: 'refusal', refusal: '' },
          }),
        );
        frames.push(
          this.event('response.refusal.done', {
            ...at,
            content_index: contentIndex,
            refusal: item.refusal,
          }),
        );
        frames.push(
          this.event('response.content_part.done', { ...at, content_index: contentIndex, part }),
        );
      }
    }
    if (item.kind === 'function_call')
      frames.push(
        this.event('response.function_call_arguments.done', {
          ...at,
          name: item.name,
          arguments: item.arguments,
        }),
      );
    frames.push(
      this.event('response.output_item.done', {
        output_index: item.outputIndex,
        item: this.finished(item, 'completed'),
      }),
    );
    return frames;
  }

  /** An item as `response.output_item.added` shows it: empty, in progress. */
  private started(item: OpenItem): ResponseOutputItem {
    switch (item.kind) {
      case 'reasoning':
        return this.reasoningItem({ id: item.id }, '');
      case 'message':
        return {
          type: 'message',
          id: item.id,
          status: 'in_progress',
          role: 'assistant',
          content: [],
        };
      case 'function_call':
        return {
          type: 'function_call',
          id: item.id,
          call_id: item.callId,
          name: item.name,
          arguments: '',
          status: 'in_progress',
        };
    }
  }

  /** An item as it ends: everything it holds. */
  private finished(item: OpenItem, status: 'completed' | 'incomplete'): ResponseOutputItem {
    switch (item.kind) {
      case 'reasoning':
        return this.reasoningItem(item, item.text);
      case 'message':
        return messageItem(item, status);
      case 'function_call':
        return {
          type: 'function_call',
          id: item.id,
          call_id: item.callId,
          name: item.name,
          arguments: item.arguments,
          status: 'completed',
        } satisfies ResponseFunctionCall;
    }
  }

  private reasoningItem(
    item: { id: string; sealed?: OpaqueOutput },
    text: string,
  ): ResponseReasoningItem {
    const content = text === '' ? [] : [{ type: 'reasoning_text' as const, text }];
    if (item.sealed !== undefined) return { ...sealedReasoningItem(item.id, item.sealed), content };
    return {
      type: 'reasoning',
      id: item.id,
      summary: [],
      content,
      ...(this.echo.includeEncrypted ? { encrypted_content: null } : {}),
    };
  }
}

function messageItem(
  item: { id: string; text: string; refusal: string },
  status: 'completed' | 'incomplete',
): ResponseOutputMessage {
  return {
    type: 'message',
    id: item.id,
    status,
    role: 'assistant',
    content: [
      ...(item.text === '' && item.refusal !== ''
        ? []
        : [{ type: 'output_text' as const, text: item.text, annotations: [], logprobs: [] }]),
      ...(item.refusal === '' ? [] : [{ type: 'refusal' as const, refusal: item.refusal }]),
    ],
  };
}
