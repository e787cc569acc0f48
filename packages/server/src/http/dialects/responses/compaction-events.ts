import type { ResponseObject } from '@tollgate/protocol';
import type { ChatUsage } from '../../../chat/chat-types.js';
import type { AnswerSeen } from '../../../chat/zero-completion.js';
import type { UpstreamChunk } from '../../../providers/openai-compatible/chat-schemas.js';
import type { SseFrame } from '../../sse.js';
import type { AnswerNames, ChatDialect, StreamPresenter } from '../chat-dialect.js';
import { responseObject, responseUsage, type ResponseEcho } from './responses-answer.js';
import { summaryItem } from './responses-compact.js';

/**
 * A compaction turn of `POST /v1/responses` (docs/agents.md, "Compaction"): Codex CLI 0.171
 * compacts a long session by sending its history with `{"type": "compaction_trigger"}` last, and
 * expects exactly one output item, a `compaction`, in a response that completes. The serving
 * channel is asked for a summary of the history as a chat turn (the route appends
 * `SUMMARY_REQUEST`), whatever protocol it speaks; the summary's text is never shown as a
 * message: it becomes the compaction item (`summaryItem`), which reads as a user message on any
 * channel when it comes back. A summary cut by the output cap still completes: it is the history
 * Codex goes on from, and a failed compaction would end the session.
 */
export function compactionTurnDialect(echo: ResponseEcho): ChatDialect {
  return {
    answer: ({ completion, usage }, names) =>
      compactionResponse(echo, names, completion.choices[0]?.message?.content ?? '', usage),
    presenter: (names) => new CompactionEvents(names, echo),
  };
}

function compactionResponse(
  echo: ResponseEcho,
  names: AnswerNames,
  summary: string,
  usage: ChatUsage,
): ResponseObject {
  return responseObject(echo, names, {
    status: 'completed',
    incomplete_details: null,
    error: null,
    output: [summaryItem(names.requestId, summary)],
    usage: responseUsage(usage),
  });
}

/**
 * The stream of a compaction turn: `response.created` and `response.in_progress` when the
 * upstream is open, nothing while the summary is written, then the compaction item
 * (`response.output_item.added`, `response.output_item.done`) and `response.completed` with
 * integer usage; or `response.failed`. `sequence_number` counts from 0.
 */
class CompactionEvents implements StreamPresenter {
  chunks = 0;
  private sequence = 0;
  private summary = '';
  private finishReason: string | null = null;

  constructor(
    private readonly names: AnswerNames,
    private readonly echo: ResponseEcho,
  ) {}

  opening(): SseFrame[] {
    const response = this.response('in_progress', null);
    return [
      this.event('response.created', { response }),
      this.event('response.in_progress', { response }),
    ];
  }

  relay(chunk: UpstreamChunk): SseFrame[] {
    if (chunk.choices.length === 0) return [];
    this.chunks += 1;
    for (const choice of chunk.choices) {
      if (choice.delta.content) this.summary += choice.delta.content;
      if (choice.finish_reason !== undefined && choice.finish_reason !== null)
        this.finishReason = choice.finish_reason;
    }
    return [];
  }

  /** Nothing reaches the caller before the end: a stream cut before it delivered nothing. */
  seen(completionTokens: number | undefined): AnswerSeen {
    return { producedOutput: false, finishReason: this.finishReason, completionTokens };
  }

  assembled(usage: ChatUsage): ResponseObject {
    return compactionResponse(this.echo, this.names, this.summary, usage);
  }

  completed(usage: ChatUsage): SseFrame[] {
    const response = this.assembled(usage);
    const item = response.output[0];
    return [
      this.event('response.output_item.added', { output_index: 0, item }),
      this.event('response.output_item.done', { output_index: 0, item }),
      this.event('response.completed', { response }),
    ];
  }

  failed(errorBody: unknown): SseFrame[] {
    const error = (errorBody as { error?: { code?: unknown; message?: unknown } }).error;
    const response = this.response('failed', {
      code: typeof error?.code === 'string' ? error.code : 'UPSTREAM_ERROR',
      message: typeof error?.message === 'string' ? error.message : 'the compaction failed',
    });
    return [this.event('response.failed', { response })];
  }

  private response(
    status: 'in_progress' | 'failed',
    error: ResponseObject['error'],
  ): ResponseObject {
    return responseObject(this.echo, this.names, {
      status,
      incomplete_details: null,
      error,
      output: [],
      usage: null,
    });
  }

  private event(type: string, fields: Record<string, unknown>): SseFrame {
    const data = { type, sequence_number: this.sequence, ...fields };
    this.sequence += 1;
    return { event: type, data: JSON.stringify(data) };
  }
}
