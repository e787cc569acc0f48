import type { ChatAnswer, ChatCallOptions, ChatUpstream, StreamEvent } from '../chat-upstream.js';
import { contextLengthReader } from '../context-length.js';
import type { UpstreamClient } from '../upstream-http.js';
import { readMessagesAnswer } from './messages-answer.js';
import { toMessagesRequest } from './messages-request.js';
import { readMessagesStream } from './messages-stream.js';

/** Anthropic's Messages endpoint, under the upstream's base URL (`https://api.anthropic.com/v1`). */
const MESSAGES_PATH = '/messages';

/**
 * Anthropic Messages (`POST /messages`, `chat_api: "messages"`), plain and streamed: the
 * internal chat request translated to Anthropic's (messages-request.ts), the answer and the
 * stream read back into the internal shapes with Anthropic's usage and opaque thinking
 * (docs/agents.md, "Anthropic upstreams"). The key goes as `x-api-key` (upstream-http.ts).
 * Anthropic's 400 "prompt is too long" is read as the caller's context-length error
 * (context-length.ts).
 */
export class MessagesChat implements ChatUpstream {
  constructor(private readonly http: UpstreamClient) {}

  async complete(body: Record<string, unknown>, options: ChatCallOptions): Promise<ChatAnswer> {
    const request = toMessagesRequest(body, options, false);
    const response = await this.http.postJson(
      MESSAGES_PATH,
      request.body,
      undefined,
      request.headers,
      contextLengthReader('anthropic_messages', options.model),
    );
    return readMessagesAnswer(response.json, options.channel, response.upstreamRequestId);
  }

  async stream(
    body: Record<string, unknown>,
    signal: AbortSignal,
    options: ChatCallOptions,
  ): Promise<{ events: AsyncGenerator<StreamEvent>; upstreamRequestId: string | null }> {
    const request = toMessagesRequest(body, options, true);
    const opened = await this.http.postStream(
      MESSAGES_PATH,
      request.body,
      signal,
      request.headers,
      contextLengthReader('anthropic_messages', options.model),
    );
    return {
      events: readMessagesStream(opened.body, options.channel),
      upstreamRequestId: opened.upstreamRequestId,
    };
  }
}
