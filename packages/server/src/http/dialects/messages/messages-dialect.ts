import type { ChatDialect } from '../chat-dialect.js';
import { plainMessage, type ThinkingShown } from './messages-answer.js';
import { MessagesStream } from './messages-stream.js';

/**
 * `POST /v1/messages` (Anthropic's Messages API) on the chat core: the plain answer is an
 * Anthropic `message` (also the record's body, which a replay sends again), a stream is
 * Anthropic's named events (docs/anthropic-messages.md). `thinking.display: "omitted"` leaves
 * thinking blocks out of both.
 */
export function messagesDialect(thinking: ThinkingShown = { shown: true }): ChatDialect {
  return {
    answer: ({ completion, usage, opaque = [] }, names) =>
      plainMessage(completion, usage, names, thinking, opaque),
    presenter: (names) => new MessagesStream(names, thinking),
  };
}
