import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { ChatAnswer, ChatInput } from './chat.js';
import type { Directives } from './directives.js';
import { sendEvents, words } from './sse.js';
import { dialectUsage, STREAM_USAGE, type SimulatorDialect } from './chat-dialects.js';

/** The non-streamed OpenAI `chat.completion` body. */
export function completionBody(
  input: ChatInput,
  answer: ChatAnswer,
  dialect: SimulatorDialect = 'openai',
) {
  return {
    id: `chatcmpl-sim-${randomUUID()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: input.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: answer.content,
          ...(answer.reasoning === undefined ? {} : { reasoning_content: answer.reasoning }),
          ...(answer.toolCalls.length === 0 ? {} : { tool_calls: answer.toolCalls }),
        },
        finish_reason: answer.finishReason,
      },
    ],
    ...(answer.usage === undefined ? {} : { usage: dialectUsage(dialect, answer.usage) }),
    ...(answer.serviceTier === undefined ? {} : { service_tier: answer.serviceTier }),
  };
}

/**
 * Streams the answer as OpenAI chunks: role, reasoning words, content words, tool calls, the
 * finish reason, then the usage chunk when asked for, then `[DONE]`. `[sim:cut_after=N]` drops
 * the connection after N chunks, `[sim:stall_after=N]` goes silent after N chunks (connection
 * open), `[sim:error_after=N]` sends an error event after N chunks and ends the stream.
 */
export async function streamChat(
  response: ServerResponse,
  input: ChatInput,
  answer: ChatAnswer,
  directives: Directives,
  dialect: SimulatorDialect = 'openai',
): Promise<void> {
  const usage = answer.usage === undefined ? undefined : dialectUsage(dialect, answer.usage);
  const place = STREAM_USAGE[dialect];
  const id = `chatcmpl-sim-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  // Every chunk names the tier, as OpenAI's do.
  const tier = answer.serviceTier === undefined ? {} : { service_tier: answer.serviceTier };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: input.model,
    ...tier,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  // Built one at a time as they are sent: a long answer never holds all its chunks at once.
  function* chunks(): Generator<unknown> {
    yield chunk({ role: 'assistant', content: '' });
    for (const word of words(answer.reasoning)) yield chunk({ reasoning_content: word });
    for (const word of words(answer.content)) yield chunk({ content: word });
    for (const [index, call] of answer.toolCalls.entries())
      yield chunk({ tool_calls: [{ index, ...call }] });
    const finish = chunk({}, answer.finishReason);
    if (usage === undefined || place === 'usage_chunk') yield finish;
    else if (place === 'finish_chunk') yield { ...finish, usage };
    else yield { ...finish, choices: finish.choices.map((choice) => ({ ...choice, usage })) };
    if (place === 'usage_chunk' && input.includeUsage && usage !== undefined)
      yield {
        id,
        object: 'chat.completion.chunk',
        created,
        model: input.model,
        ...tier,
        choices: [],
        usage,
      };
  }

  await sendEvents(response, chunks(), directives, {
    format: (payload) => `data: ${JSON.stringify(payload)}\n\n`,
    failure: () =>
      `data: ${JSON.stringify({ error: { message: 'simulated failure mid-stream', type: 'server_error' } })}\n\n`,
    ending: 'data: [DONE]\n\n',
  });
}
