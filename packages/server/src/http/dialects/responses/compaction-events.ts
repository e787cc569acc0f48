import type { ResponseObject } from '@tollgate/protocol';
import type { ChatUsage } from '../../../chat/chat-types.js';
import type { AnswerSeen } from '../../../chat/zero-completion.js';
import type { UpstreamChunk } from '../../../providers/openai-compatible/chat-schemas.js';
import type { SseFrame } from '../../sse.js';
import type { AnswerNames, ChatDialect } from '../chat-dialect.js';
import { ResponseEvents } from './responses-stream.js';
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
 * integer usage; or `response.failed`. The opening, the failure and the numbering are a
 * response stream's (`ResponseEvents`); only what the chunks become differs.
 */
class CompactionEvents extends ResponseEvents {
  private summary = '';
  private summaryFinish: string | null = null;

  override relay(chunk: UpstreamChunk): SseFrame[] {
    if (chunk.choices.length === 0) return [];
    this.chunks += 1;
    for (const choice of chunk.choices) {
      if (choice.delta.content) this.summary += choice.delta.content;
      if (choice.finish_reason !== undefined && choice.finish_reason !== null)
        this.summaryFinish = choice.finish_reason;
    }
    return [];
  }

  /** Nothing reaches the caller before the end: a stream cut before it delivered nothing. */
  override seen(completionTokens: number | undefined): AnswerSeen {
    return { producedOutput: false, finishReason: this.summaryFinish, completionTokens };
  }

  override assembled(usage: ChatUsage): ResponseObject {
    return compactionResponse(this.echo, this.names, this.summary, usage);
  }

  override completed(usage: ChatUsage): SseFrame[] {
    const response = this.assembled(usage);
    const item = response.output[0];
    return [
      this.event('response.output_item.added', { output_index: 0, item }),
      this.event('response.output_item.done', { output_index: 0, item }),
      this.event('response.completed', { response }),
    ];
  }
}
