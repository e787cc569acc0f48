import type { ChatRequest, ChatUsage } from '../../chat/chat-types.js';
import type { AnswerSeen } from '../../chat/zero-completion.js';
import { toChatUsage } from '../../providers/openai-compatible/chat.js';
import type {
  ToolCallExtraContent,
  UpstreamChunk,
} from '../../providers/openai-compatible/chat-schemas.js';
import type { SseFrame } from '../sse.js';
import { openAiUsage } from '../../chat/usage-fields.js';
import type { AnswerNames, ChatDialect, StreamPresenter } from './chat-dialect.js';

/** `POST /v1/chat/completions`: the upstream's checked choices under our id and model. */
export const chatCompletionsDialect: ChatDialect = {
  answer: ({ completion, usage }, names) => ({
    id: `chatcmpl-${names.requestId}`,
    object: 'chat.completion',
    created: names.created,
    model: names.model,
    choices: completion.choices,
    usage: openAiUsage(usage),
  }),
  presenter: (names, chat) => new ChunkRelay(names, chat),
};

/** Rebuilds each chunk from checked fields under our id and model, and assembles the whole reply. */
class ChunkRelay implements StreamPresenter {
  chunks = 0;
  private content = '';
  private reasoning = '';
  private finishReason: string | null = null;
  private readonly toolCalls = new Map<
    number,
    {
      id: string;
      type: 'function';
      function: { name: string; arguments: string };
      /** Gemini's thought signature, sealed (providers/openai-compatible/thought-signatures.ts). */
      extra_content?: ToolCallExtraContent;
    }
  >();
  private readonly id: string;
  private readonly includeUsage: boolean;
  /** A chunk with the upstream's usage was passed on (the caller asked for usage). */
  private usageSent = false;

  constructor(
    private readonly names: AnswerNames,
    chat: ChatRequest,
  ) {
    this.id = `chatcmpl-${names.requestId}`;
    this.includeUsage = chat.includeUsage;
  }

  opening(): SseFrame[] {
    return [];
  }

  seen(completionTokens: number | undefined): AnswerSeen {
    return {
      producedOutput: this.content !== '' || this.reasoning !== '' || this.toolCalls.size > 0,
      finishReason: this.finishReason,
      completionTokens,
    };
  }

  relay(chunk: UpstreamChunk): SseFrame[] {
    for (const choice of chunk.choices) {
      this.content += choice.delta.content ?? '';
      this.reasoning += choice.delta.reasoning_content ?? '';
      if (choice.finish_reason !== undefined && choice.finish_reason !== null)
        this.finishReason = choice.finish_reason;
      for (const call of choice.delta.tool_calls ?? []) {
        const existing = this.toolCalls.get(call.index) ?? {
          id: '',
          type: 'function' as const,
          function: { name: '', arguments: '' },
        };
        existing.id ||= call.id ?? '';
        existing.function.name += call.function?.name ?? '';
        existing.function.arguments += call.function?.arguments ?? '';
        // Kept on the assembled record as the stream carried it, so the record's answer can be
        // sent back on the next turn as the streamed one can.
        if (call.extra_content != null) existing.extra_content = call.extra_content;
        this.toolCalls.set(call.index, existing);
      }
    }
    const usage =
      chunk.usage !== undefined && chunk.usage !== null ? toChatUsage(chunk.usage) : undefined;
    if (chunk.choices.length === 0 && (!this.includeUsage || usage === undefined)) return [];
    this.chunks += 1;
    if (this.includeUsage && usage !== undefined) this.usageSent = true;
    const rebuilt = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.names.created,
      model: this.names.model,
      choices: chunk.choices,
      ...(this.includeUsage ? { usage: usage === undefined ? null : openAiUsage(usage) } : {}),
    };
    return [{ data: JSON.stringify(rebuilt) }];
  }

  assembled(usage: ChatUsage) {
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.names.created,
      model: this.names.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: this.content === '' && this.toolCalls.size > 0 ? null : this.content,
            ...(this.reasoning === '' ? {} : { reasoning_content: this.reasoning }),
            ...(this.toolCalls.size === 0
              ? {}
              : {
                  tool_calls: [...this.toolCalls.entries()]
                    .sort(([a], [b]) => a - b)
                    .map(([, call]) => call),
                }),
          },
          finish_reason: this.finishReason,
        },
      ],
      usage: openAiUsage(usage),
    };
  }

  /**
   * `[DONE]`, after the usage chunk a caller who asked for usage is owed when the upstream sent
   * none: the usage billed (the gateway's count, docs/billing.md "A stream that ends without usage").
   */
  completed(usage: ChatUsage): SseFrame[] {
    if (!this.includeUsage || this.usageSent) return [{ data: '[DONE]' }];
    const usageChunk = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.names.created,
      model: this.names.model,
      choices: [],
      usage: openAiUsage(usage),
    };
    return [{ data: JSON.stringify(usageChunk) }, { data: '[DONE]' }];
  }

  failed(errorBody: unknown): SseFrame[] {
    return [{ data: JSON.stringify(errorBody) }];
  }
}
