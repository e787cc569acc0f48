import type { ChatDialect } from '../chat-dialect.js';
import { plainMessage } from './messages-answer.js';
import { MessagesStream } from './messages-stream.js';

/**
 * `POST /v1/messages` (Anthropic's Messages API) on the chat core: the plain answer is an
 * Anthropic `message` (also the record's body, which a replay sends again), a stream is
 * Anthropic's named events (docs/anthropic-messages.md).
 */
export const messagesDialect: ChatDialect = {
  answer: (completion, usage, names) => plainMessage(completion, usage, names),
  presenter: (names) => new MessagesStream(names),
};
