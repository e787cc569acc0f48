import { createParser } from 'eventsource-parser';
import type { ChatUsage } from '../../chat/chat-types.js';
import { opaqueToken, type OpaqueOutput } from '../../chat/opaque-parts.js';
import type { ChatAnswer, ChatCallOptions, ChatUpstream, StreamEvent } from '../chat-upstream.js';
import type { UpstreamChunk, UpstreamCompletion } from '../openai-compatible/chat-schemas.js';
import { parseUpstream, unverifiableBody } from '../upstream-error.js';
import { contextLengthReader } from '../context-length.js';
import { withServedTier } from '../served-tier.js';
import type { UpstreamClient } from '../upstream-http.js';
import { withFields } from '../../util/with-fields.js';
import { openAiUsage } from '../../chat/usage-fields.js';
import { chatToResponses } from './chat-to-responses.js';
import {
  compactionAnswerSchema,
  functionCallItemSchema,
  reasoningItemSchema,
  responseSchema,
  streamEventSchemas,
  type ReasoningItem,
  type ResponsesAnswer,
  type ResponsesUsage,
} from './responses-schemas.js';

/**
 * An OpenAI Responses upstream (`chat_api: responses`): the internal chat request is sent as a
 * Responses body (chat-to-responses.ts) and the answer read back as a chat completion, its
 * reasoning items sealed as opaque parts for the caller (chat/opaque-parts.ts) and its usage
 * read from Responses' own fields, with the tier the response object says it was served on
 * (`service_tier`, served-tier.ts). Its 400 `context_length_exceeded` is read as the caller's
 * context-length error (context-length.ts).
 */
export class ResponsesChat implements ChatUpstream {
  constructor(private readonly http: UpstreamClient) {}

  async complete(body: Record<string, unknown>, options: ChatCallOptions): Promise<ChatAnswer> {
    const request = chatToResponses(body, options.opaque, options.maxOutputTokens);
    const response = await this.http.postJson(
      '/responses',
      withFields(request, { stream: false }),
      undefined,
      undefined,
      contextLengthReader('openai_responses', options.model),
    );
    const answer = parseUpstream(
      responseSchema,
      response.json,
      response.upstreamRequestId,
      'responses body',
    );
    const usage = withServedTier(
      checkedUsage(answer.usage, response.upstreamRequestId),
      answer.service_tier,
    );
    return {
      completion: completionOf(answer),
      usage,
      upstreamRequestId: response.upstreamRequestId,
      opaque: answer.output.flatMap((item) =>
        item.type === 'reasoning' ? [sealedReasoning(item, options.channel)] : [],
      ),
    };
  }

  /**
   * `POST /v1/responses/compact` upstream: the conversation only (model, input, and the prompt
   * cache key: what the endpoint takes); the summary item it answers is sealed for the caller
   * like encrypted reasoning, so it can only ever come back to this channel.
   */
  async compact(body: Record<string, unknown>, options: ChatCallOptions): Promise<ChatAnswer> {
    const request = chatToResponses(body, options.opaque, options.maxOutputTokens);
    const response = await this.http.postJson(
      '/responses/compact',
      {
        model: request['model'],
        input: request['input'],
        ...(request['prompt_cache_key'] === undefined
          ? {}
          : { prompt_cache_key: request['prompt_cache_key'] }),
      },
      undefined,
      undefined,
      contextLengthReader('openai_responses', options.model),
    );
    const answer = parseUpstream(
      compactionAnswerSchema,
      response.json,
      response.upstreamRequestId,
      'responses compaction body',
    );
    const usage = checkedUsage(answer.usage, response.upstreamRequestId);
    return {
      completion: {
        choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'stop' }],
        usage: openAiUsage(usage),
      },
      usage,
      upstreamRequestId: response.upstreamRequestId,
      items: answer.output.map((item) =>
        item.type === 'message'
          ? { type: 'message', role: item.role, content: item.content }
          : {
              type: 'compaction',
              ...(item.id == null ? {} : { id: item.id }),
              encrypted_content: opaqueToken({
                channel: options.channel,
                kind: 'responses_compaction',
                payload: item,
              }),
            },
      ),
    };
  }

  async stream(
    body: Record<string, unknown>,
    signal: AbortSignal,
    options: ChatCallOptions,
  ): Promise<{ events: AsyncGenerator<StreamEvent>; upstreamRequestId: string | null }> {
    const request = chatToResponses(body, options.opaque, options.maxOutputTokens);
    const opened = await this.http.postStream(
      '/responses',
      withFields(request, { stream: true }),
      signal,
      undefined,
      contextLengthReader('openai_responses', options.model),
    );
    return {
      events: readEvents(opened.body, options.channel),
      upstreamRequestId: opened.upstreamRequestId,
    };
  }
}

/** An answer's usage, or the answer is unverifiable (a detail above its total). */
function checkedUsage(usage: ResponsesUsage, upstreamRequestId: string | null): ChatUsage {
  const read = chatUsageOf(usage);
  if (read === undefined)
    throw unverifiableBody(upstreamRequestId, 'usage details exceed their totals');
  return read;
}

export function chatUsageOf(usage: ResponsesUsage): ChatUsage | undefined {
  const cachedTokens = usage.input_tokens_details?.cached_tokens ?? 0;
  const reasoningTokens = usage.output_tokens_details?.reasoning_tokens ?? 0;
  if (cachedTokens > usage.input_tokens || reasoningTokens > usage.output_tokens) return undefined;
  return {
    promptTokens: usage.input_tokens,
    completionTokens: usage.output_tokens,
    cachedTokens,
    reasoningTokens,
  };
}

function finishReasonOf(answer: ResponsesAnswer): string {
  if (answer.status === 'incomplete')
    return answer.incomplete_details?.reason === 'content_filter' ? 'content_filter' : 'length';
  return answer.output.some((item) => item.type === 'function_call') ? 'tool_calls' : 'stop';
}

function reasoningText(item: ReasoningItem): string {
  const summary = item.summary.map((part) => part.text).join('\n\n');
  return summary !== '' ? summary : (item.content ?? []).map((part) => part.text).join('');
}

function sealedReasoning(item: ReasoningItem, channel: string): OpaqueOutput {
  return {
    token: opaqueToken({ channel, kind: 'responses_reasoning', payload: item }),
    kind: 'responses_reasoning',
    text: reasoningText(item),
  };
}

function completionOf(answer: ResponsesAnswer): UpstreamCompletion {
  let content = '';
  let refusal: string | null = null;
  const reasoning: string[] = [];
  const toolCalls: {
    id: string;
    type: 'function';
    function: { name: string; arguments: string };
  }[] = [];
  for (const item of answer.output) {
    if (item.type === 'reasoning') reasoning.push(reasoningText(item));
    if (item.type === 'function_call')
      toolCalls.push({
        id: item.call_id,
        type: 'function',
        function: { name: item.name, arguments: item.arguments },
      });
    if (item.type === 'message')
      for (const part of item.content)
        if (part.type === 'output_text') content += part.text;
        else refusal = (refusal ?? '') + part.refusal;
  }
  const usage = chatUsageOf(answer.usage);
  return {
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: content === '' && toolCalls.length > 0 ? null : content,
          ...(reasoning.length === 0 ? {} : { reasoning_content: reasoning.join('\n\n') }),
          ...(refusal === null ? {} : { refusal }),
          ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
        },
        finish_reason: finishReasonOf(answer),
      },
    ],
    usage: openAiUsage(
      usage ?? { promptTokens: 0, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0 },
    ),
  };
}

type Json = Record<string, unknown>;
const delta = (fields: Json): UpstreamChunk => ({
  choices: [{ index: 0, delta: fields }],
});

/**
 * Reads the upstream's named events into chat chunks: text, refusal and reasoning deltas as
 * chat deltas, each function call as a tool call (index by order of appearance), a finished
 * reasoning item as an opaque part, and `response.completed` / `response.incomplete` as the
 * finish chunk and the usage chunk. `response.failed` and `error` are an upstream error; an
 * event that fails its schema ends the stream as invalid.
 */
async function* readEvents(
  body: AsyncIterable<Buffer>,
  channel: string,
): AsyncGenerator<StreamEvent> {
  const pending: string[] = [];
  const parser = createParser({ onEvent: (event) => void pending.push(event.data) });
  const decoder = new TextDecoder();
  /** Tool call index of each function call item, by its output index. */
  const calls = new Map<number, { index: number; argued: boolean }>();
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    while (pending.length > 0) {
      const data = pending.shift() ?? '';
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        yield { kind: 'invalid', detail: 'event is not JSON' };
        return;
      }
      const type = (json as { type?: unknown } | null)?.type;
      if (typeof type !== 'string') {
        yield { kind: 'invalid', detail: 'event without a type' };
        return;
      }
      if (type === 'response.failed' || type === 'error') {
        yield { kind: 'upstream_error' };
        return;
      }
      if (!(type in streamEventSchemas)) continue;
      const parsed = streamEventSchemas[type as keyof typeof streamEventSchemas].safeParse(json);
      if (!parsed.success) {
        yield { kind: 'invalid', detail: `${type}: ${parsed.error.issues[0]?.message ?? ''}` };
        return;
      }
      const event = parsed.data as Json;
      switch (type) {
        case 'response.output_text.delta':
          yield { kind: 'chunk', chunk: delta({ content: event['delta'] }) };
          break;
        case 'response.refusal.delta':
          yield { kind: 'chunk', chunk: delta({ refusal: event['delta'] }) };
          break;
        case 'response.reasoning_summary_text.delta':
        case 'response.reasoning_text.delta':
          yield { kind: 'chunk', chunk: delta({ reasoning_content: event['delta'] }) };
          break;
        case 'response.reasoning_summary_part.added':
          // Summary parts read as paragraphs, as the plain answer joins them.
          if ((event['summary_index'] as number) > 0)
            yield { kind: 'chunk', chunk: delta({ reasoning_content: '\n\n' }) };
          break;
        case 'response.output_item.added': {
          const item = functionCallItemSchema.safeParse(event['item']);
          if (!item.success) break;
          const index = calls.size;
          calls.set(event['output_index'] as number, { index, argued: item.data.arguments !== '' });
          yield {
            kind: 'chunk',
            chunk: delta({
              tool_calls: [
                {
                  index,
                  id: item.data.call_id,
                  type: 'function',
                  function: { name: item.data.name, arguments: item.data.arguments },
                },
              ],
            }),
          };
          break;
        }
        case 'response.function_call_arguments.delta': {
          const call = calls.get(event['output_index'] as number);
          if (call === undefined) {
            yield { kind: 'invalid', detail: 'arguments of a function call never announced' };
            return;
          }
          call.argued = true;
          yield {
            kind: 'chunk',
            chunk: delta({
              tool_calls: [{ index: call.index, function: { arguments: event['delta'] } }],
            }),
          };
          break;
        }
        case 'response.output_item.done': {
          const reasoning = reasoningItemSchema.safeParse(event['item']);
          if (reasoning.success) {
            yield {
              kind: 'chunk',
              chunk: delta({}),
              opaque: [sealedReasoning(reasoning.data, channel)],
            };
            break;
          }
          // Arguments sent only whole, with the finished item.
          const call = calls.get(event['output_index'] as number);
          const item = functionCallItemSchema.safeParse(event['item']);
          if (call !== undefined && !call.argued && item.success && item.data.arguments !== '')
            yield {
              kind: 'chunk',
              chunk: delta({
                tool_calls: [{ index: call.index, function: { arguments: item.data.arguments } }],
              }),
            };
          break;
        }
        case 'response.completed':
        case 'response.incomplete': {
          const answer = (event as { response: ResponsesAnswer }).response;
          const read = chatUsageOf(answer.usage);
          if (read === undefined) {
            yield { kind: 'invalid', detail: 'usage details exceed their totals' };
            return;
          }
          // The finished response names the tier it was served on (`response.created` names
          // the one asked, `auto`): the usage is billed at that one.
          const usage = withServedTier(read, answer.service_tier);
          yield {
            kind: 'chunk',
            chunk: { choices: [{ index: 0, delta: {}, finish_reason: finishReasonOf(answer) }] },
          };
          yield { kind: 'chunk', chunk: { choices: [], usage: openAiUsage(usage) }, usage };
          yield { kind: 'done' };
          return;
        }
      }
    }
  }
}
