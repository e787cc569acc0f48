import { describe, expect, it } from 'vitest';
import { UnpresentableChunk } from '../../src/http/dialects/chat-dialect.js';
import { plainMessage } from '../../src/http/dialects/messages/messages-answer.js';
import { MessagesStream } from '../../src/http/dialects/messages/messages-stream.js';
import { UpstreamFailure } from '../../src/providers/upstream-error.js';
import type { UpstreamChunk } from '../../src/providers/openai-compatible/chat-schemas.js';

const names = { requestId: 'req_abc', model: 'sim-chat', created: 0 };
const usage = { promptTokens: 10, completionTokens: 5, cachedTokens: 4, reasoningTokens: 0 };
const chunk = (
  delta: UpstreamChunk['choices'][number]['delta'],
  finish: string | null = null,
): UpstreamChunk => ({
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/**
 * Risk: a chat tool call whose arguments are not a JSON object reaches a Messages caller as a
 * tool_use `input` (an object by contract: Claude Code would run a tool with garbage), or is
 * billed as a success. It is an unverifiable answer instead: an upstream error, outcome unknown.
 */
describe('tool call arguments that are not a JSON object', () => {
  it('make a plain answer an unverifiable upstream answer', () => {
    const completion = {
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant' as const,
            content: null,
            tool_calls: [
              {
                id: 'call_1',
                type: 'function' as const,
                function: { name: 'f', arguments: '{"a": ' },
              },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5 },
    };
    expect(() => plainMessage(completion, usage, names)).toThrow(UpstreamFailure);
    const failure = (() => {
      try {
        plainMessage(completion, usage, names);
      } catch (error) {
        return error as UpstreamFailure;
      }
      return undefined;
    })();
    expect(failure?.certainty).toBe('unknown');
    const array = structuredClone(completion);
    const call = array.choices[0]?.message.tool_calls[0];
    if (call !== undefined) call.function.arguments = '[1, 2]';
    expect(() => plainMessage(array, usage, names)).toThrow(UpstreamFailure);
  });

  it('end a stream at its finish chunk, before the block stops', () => {
    const stream = new MessagesStream(names);
    stream.opening();
    const started = stream.relay(
      chunk({
        tool_calls: [
          {
            index: 0,
            id: 'call_1',
            type: 'function',
            function: { name: 'f', arguments: '{"a": ' },
          },
        ],
      }),
    );
    expect(started.map((frame) => frame.event)).toEqual([
      'content_block_start',
      'content_block_delta',
    ]);
    expect(() => stream.relay(chunk({}, 'tool_calls'))).toThrow(UnpresentableChunk);
  });

  it('anthropic usage leaves cached input out of input_tokens', () => {
    const stream = new MessagesStream(names);
    stream.relay(chunk({ content: 'hi' }, 'stop'));
    expect(stream.assembled(usage)).toMatchObject({
      id: 'msg_abc',
      content: [{ type: 'text', text: 'hi' }],
      usage: {
        input_tokens: 6,
        cache_read_input_tokens: 4,
        output_tokens: 5,
        cache_creation_input_tokens: 0,
      },
    });
  });
});
