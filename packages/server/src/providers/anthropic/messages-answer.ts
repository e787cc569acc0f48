import { opaqueToken, type OpaqueOutput } from '../../chat/opaque-parts.js';
import type { ChatAnswer } from '../chat-upstream.js';
import { parseUpstream, unverifiableBody } from '../upstream-error.js';
import { messageSchema } from './messages-schemas.js';
import { cacheWritesOf, chatUsageOf, FINISH_REASONS } from './messages-usage.js';
import { openAiUsage } from '../../chat/usage-fields.js';

/**
 * A plain Anthropic answer as the internal chat completion (one choice): text blocks joined as
 * `content`, thinking texts (blank-line separated) as `reasoning_content`, each `tool_use` as a
 * tool call (`arguments` the JSON of its `input`), and every thinking or redacted thinking block
 * sealed for the caller, in order, as it came (its signature covers it). Throws the unverifiable
 * failure for a body its schema refuses or usage beyond safe integers.
 */
export function readMessagesAnswer(
  json: unknown,
  channel: string,
  upstreamRequestId: string | null,
): ChatAnswer {
  const message = parseUpstream(messageSchema, json, upstreamRequestId, 'messages body');
  const texts: string[] = [];
  const thoughts: string[] = [];
  const opaque: OpaqueOutput[] = [];
  const toolCalls: {
    id: string;
    type: 'function';
    function: { name: string; arguments: string };
  }[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        texts.push(block.text);
        break;
      case 'thinking':
        thoughts.push(block.thinking);
        opaque.push({
          token: opaqueToken({ channel, kind: 'anthropic_thinking', payload: block }),
          kind: 'anthropic_thinking',
          text: block.thinking,
        });
        break;
      case 'redacted_thinking':
        opaque.push({
          token: opaqueToken({ channel, kind: 'anthropic_redacted_thinking', payload: block }),
          kind: 'anthropic_redacted_thinking',
          text: '',
        });
        break;
      case 'tool_use':
        toolCalls.push({
          id: block.id,
          type: 'function',
          function: { name: block.name, arguments: JSON.stringify(block.input) },
        });
        break;
    }
  }
  const usage = chatUsageOf({
    input: message.usage.input_tokens,
    cacheRead: message.usage.cache_read_input_tokens ?? 0,
    ...cacheWritesOf(message.usage),
    output: message.usage.output_tokens,
    serviceTier: message.usage.service_tier,
  });
  if (usage === undefined) throw unverifiableBody(upstreamRequestId, 'usage beyond safe integers');
  const text = texts.join('');
  return {
    completion: {
      ...(message.id === undefined ? {} : { id: message.id }),
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: text === '' && toolCalls.length > 0 ? null : text,
            ...(thoughts.length === 0 ? {} : { reasoning_content: thoughts.join('\n\n') }),
            ...(toolCalls.length === 0 ? {} : { tool_calls: toolCalls }),
          },
          finish_reason: message.stop_reason === null ? null : FINISH_REASONS[message.stop_reason],
        },
      ],
      usage: openAiUsage(usage),
    },
    usage,
    upstreamRequestId,
    opaque,
  };
}
