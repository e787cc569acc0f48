import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Directives } from './directives.js';
import type { OpaqueState } from './opaque-state.js';
import type { ResponsesInput } from './responses-request.js';
import { sendEvents, slices, words } from './sse.js';
import { tokenize, countTokens } from './tokens.js';
import { inputTokensOf, type Turn, type TurnAnswer } from './turn.js';
import { SIMULATOR_LIMITS } from './limits.js';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** Who the answer is for: its opaque items are sealed for this caller's organisation. */
export interface ResponsesCaller {
  state: OpaqueState;
  callerKey: string;
  /** Remembers a reasoning item answered with `store` on (a later input may name it by id alone). */
  store: (id: string) => void;
  now: () => number;
}

type OutputItem = Record<string, unknown> & { type: string; id: string };

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: 'completed' | 'incomplete';
  output: OutputItem[];
  usage?: ResponsesUsage;
  [field: string]: unknown;
}

interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/**
 * The response object OpenAI's Responses API answers: a reasoning item (with
 * `encrypted_content` when included) when the turn reasons, then the message or the function
 * call. A function call made after reasoning carries the reasoning item's id in its call id
 * (`call_rs<hex>` for `rs_<hex>`), so a later request can insist on that item. With
 * `serviceTier` (`[sim:service_tier=…]`) the object names the tier it was served on
 * (`service_tier`), as OpenAI's does.
 */
export function responseObject(
  input: ResponsesInput,
  answer: TurnAnswer,
  caller: ResponsesCaller,
  serviceTier?: string,
): ResponseObject {
  const output: OutputItem[] = [];
  const reasoningHex = hex(16);
  if (answer.reasoning !== undefined) {
    const id = `rs_${reasoningHex}`;
    output.push({
      id,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: answer.reasoning }],
      ...(input.encryptedReasoning
        ? {
            encrypted_content: caller.state.seal('responses.reasoning', caller.callerKey, {
              v: 1,
              id,
              text: answer.reasoning,
            }),
          }
        : {}),
    });
    if (input.store) caller.store(id);
  }
  const incomplete = answer.finish === 'length';
  if (answer.toolCall !== undefined) {
    const reasoned = answer.reasoning !== undefined;
    output.push({
      id: reasoned ? `fc_${reasoningHex}` : `fc_${hex(16)}`,
      type: 'function_call',
      status: incomplete ? 'incomplete' : 'completed',
      arguments: answer.toolCall.arguments,
      call_id: reasoned ? `call_rs${reasoningHex}` : answer.toolCall.id,
      name: answer.toolCall.name,
    });
  } else
    output.push({
      id: `msg_${hex(16)}`,
      type: 'message',
      status: incomplete ? 'incomplete' : 'completed',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text: answer.content ?? '' }],
      role: 'assistant',
    });
  const usage = answer.usage;
  return {
    id: `resp_${hex(24)}`,
    object: 'response',
    created_at: Math.floor(caller.now() / 1000),
    status: incomplete ? 'incomplete' : 'completed',
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: input.instructions,
    max_output_tokens: input.echo.maxOutputTokens,
    model: input.model,
    output,
    parallel_tool_calls: input.echo.parallelToolCalls,
    previous_response_id: null,
    reasoning: { effort: input.reasoningEffort, summary: null },
    store: input.store,
    temperature: input.echo.temperature,
    text: input.echo.text,
    tool_choice: input.echo.toolChoice,
    tools: input.echo.tools,
    top_p: input.echo.topP,
    truncation: 'disabled',
    metadata: input.echo.metadata,
    ...(serviceTier === undefined ? {} : { service_tier: serviceTier }),
    ...(usage === undefined
      ? {}
      : {
          usage: {
            input_tokens: usage.input,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: usage.output,
            output_tokens_details: { reasoning_tokens: usage.reasoning },
            total_tokens: usage.input + usage.output,
          },
        }),
  };
}

type StreamEvent = { type: string } & Record<string, unknown>;

/**
 * Streams the response as OpenAI does: `response.created`, `response.in_progress`, each output
 * item (added, its parts and deltas, done), then `response.completed` (or `response.incomplete`),
 * every event with an `event:` line and a `sequence_number` from 0. A failure mid-stream
 * (`[sim:error_after=N]`) is an `error` event then `response.failed`. A served tier is named
 * by the finished response only: the pending one names the tier asked (`auto`), as OpenAI's do.
 */
export async function streamResponse(
  response: ServerResponse,
  answered: ResponseObject,
  directives: Directives,
): Promise<void> {
  const { usage: _usage, ...withoutUsage } = answered;
  const pending = {
    ...withoutUsage,
    status: 'in_progress',
    incomplete_details: null,
    output: [],
    usage: null,
    ...(answered['service_tier'] === undefined ? {} : { service_tier: 'auto' }),
  };
  function* events(): Generator<StreamEvent> {
    yield { type: 'response.created', response: pending };
    yield { type: 'response.in_progress', response: pending };
    for (const [index, item] of answered.output.entries()) yield* itemEvents(item, index);
    yield {
      type: answered.status === 'completed' ? 'response.completed' : 'response.incomplete',
      response: answered,
    };
  }
  const frame = (event: StreamEvent, sequence: number) => {
    const { type, ...rest } = event;
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence, ...rest })}\n\n`;
  };
  await sendEvents(response, events(), directives, {
    format: frame,
    failure: (sent) =>
      frame(
        {
          type: 'error',
          code: 'server_error',
          message: 'simulated failure mid-stream',
          param: null,
        },
        sent,
      ) +
      frame(
        {
          type: 'response.failed',
          response: {
            ...pending,
            status: 'failed',
            error: { code: 'server_error', message: 'simulated failure mid-stream' },
          },
        },
        sent + 1,
      ),
    ending: '',
  });
}

function* itemEvents(item: OutputItem, outputIndex: number): Generator<StreamEvent> {
  const at = { item_id: item.id, output_index: outputIndex };
  if (item.type === 'reasoning') {
    const text = String((item['summary'] as { text: string }[])[0]?.text ?? '');
    const { encrypted_content: _sealed, ...bare } = item;
    yield {
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { ...bare, summary: [] },
    };
    const part = { type: 'summary_text', text: '' };
    yield { type: 'response.reasoning_summary_part.added', ...at, summary_index: 0, part };
    for (const delta of words(text))
      yield { type: 'response.reasoning_summary_text.delta', ...at, summary_index: 0, delta };
    yield { type: 'response.reasoning_summary_text.done', ...at, summary_index: 0, text };
    yield {
      type: 'response.reasoning_summary_part.done',
      ...at,
      summary_index: 0,
      part: { ...part, text },
    };
  } else if (item.type === 'message') {
    const text = String((item['content'] as { text: string }[])[0]?.text ?? '');
    yield {
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { ...item, status: 'in_progress', content: [] },
    };
    const part = { type: 'output_text', annotations: [], logprobs: [], text: '' };
    yield { type: 'response.content_part.added', ...at, content_index: 0, part };
    for (const delta of words(text))
      yield { type: 'response.output_text.delta', ...at, content_index: 0, delta, logprobs: [] };
    yield { type: 'response.output_text.done', ...at, content_index: 0, text, logprobs: [] };
    yield { type: 'response.content_part.done', ...at, content_index: 0, part: { ...part, text } };
  } else {
    const args = String(item['arguments']);
    yield {
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { ...item, status: 'in_progress', arguments: '' },
    };
    for (const delta of slices(args, 16))
      yield { type: 'response.function_call_arguments.delta', ...at, delta };
    yield {
      type: 'response.function_call_arguments.done',
      ...at,
      name: item['name'],
      arguments: args,
    };
  }
  yield { type: 'response.output_item.done', output_index: outputIndex, item };
}

/**
 * `POST /v1/responses/compact`, as OpenAI answers it: the user messages of the input, then one
 * `compaction` item whose `encrypted_content` (sealed for this caller) holds a summary of the
 * rest. A later request reads that summary in its place (docs/simulator.md).
 */
export function compactionObject(
  turn: Turn,
  cleaned: readonly string[],
  directives: Directives,
  caller: ResponsesCaller,
) {
  const users = turn.messages.filter((message) => message.role === 'user');
  const lastReply = [...turn.messages].reverse().find((message) => message.role === 'assistant');
  const replyText = (lastReply?.texts ?? []).map((index) => cleaned[index] ?? '').join(' ');
  const summary = `Compacted ${turn.messages.length} items. Last reply: ${tokenize(replyText)
    .slice(0, 64)
    .join(' ')}`.slice(0, SIMULATOR_LIMITS.outputCharacters);
  const id = `cmp_${hex(16)}`;
  const input = inputTokensOf(turn, cleaned) + (directives.extraPromptTokens ?? 0);
  const output = countTokens(summary) + (directives.extraTokens ?? 0);
  return {
    id: `resp_${hex(24)}`,
    object: 'response.compaction',
    created_at: Math.floor(caller.now() / 1000),
    output: [
      ...users.map((message) => ({
        id: `msg_${hex(16)}`,
        type: 'message',
        status: 'completed',
        role: 'user',
        content: message.texts.map((index) => ({ type: 'input_text', text: turn.texts[index] })),
      })),
      {
        id,
        type: 'compaction',
        encrypted_content: caller.state.seal('responses.compaction', caller.callerKey, {
          v: 1,
          id,
          summary,
        }),
      },
    ],
    ...(directives.noUsage === true
      ? {}
      : {
          usage: {
            input_tokens: input,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: output,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: input + output,
          },
        }),
  };
}
