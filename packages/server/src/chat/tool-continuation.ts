import { ApiError } from '../errors/api-error.js';

/**
 * Every `assistant.tool_calls` must be followed, before the next non-tool message, by exactly
 * one tool message per call id (in any order); a tool message must answer a call of the
 * assistant message right before its run of tool messages. Messages are otherwise untouched.
 */
export function checkToolContinuation(messages: readonly Record<string, unknown>[]): void {
  let open: Set<string> | undefined;
  let openedAt = -1;
  messages.forEach((message, index) => {
    if (message['role'] === 'tool') {
      const id = String(message['tool_call_id']);
      if (open === undefined || !open.has(id)) {
        throw new ApiError(
          'INVALID_FUNCTION_TOOLS',
          `messages.${index}: tool message for call ${JSON.stringify(id).slice(0, 80)} does not answer a pending tool call of the assistant message before it`,
          `messages.${index}.tool_call_id`,
        );
      }
      open.delete(id);
      return;
    }
    if (open !== undefined && open.size > 0) {
      throw new ApiError(
        'INVALID_FUNCTION_TOOLS',
        `messages.${openedAt}: tool calls ${[...open].join(', ').slice(0, 200)} have no tool message before messages.${index}`,
        `messages.${openedAt}.tool_calls`,
      );
    }
    open = undefined;
    const calls = message['tool_calls'];
    if (message['role'] === 'assistant' && Array.isArray(calls)) {
      const ids = calls.map((call) => String((call as { id: unknown }).id));
      if (new Set(ids).size !== ids.length)
        throw new ApiError(
          'INVALID_FUNCTION_TOOLS',
          `messages.${index}.tool_calls: call ids must be unique`,
          `messages.${index}.tool_calls`,
        );
      open = new Set(ids);
      openedAt = index;
    }
  });
  if (open !== undefined && open.size > 0) {
    throw new ApiError(
      'INVALID_FUNCTION_TOOLS',
      `messages.${openedAt}: tool calls ${[...open].join(', ').slice(0, 200)} have no tool message`,
      `messages.${openedAt}.tool_calls`,
    );
  }
}
