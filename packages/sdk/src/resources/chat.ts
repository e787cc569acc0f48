import type { Transport } from '../http.js';
import { Stream } from '../stream.js';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionParams,
  PostOptions,
} from '../types.js';
import { businessOptions } from './shared.js';

/** `POST /v1/chat/completions`, plain and streamed. */
export class ChatCompletions {
  constructor(
    private readonly transport: Transport,
    private readonly idleTimeoutMs: number,
  ) {}

  /** A plain completion. A failure after sending is `OutcomeUnknownError`: recover, never resend. */
  async create(
    params: ChatCompletionParams & { stream?: false },
    options: PostOptions = {},
  ): Promise<ChatCompletion> {
    const { data } = await this.transport.json<ChatCompletion>({
      method: 'POST',
      path: '/chat/completions',
      json: params,
      ...businessOptions(options),
    });
    return data;
  }

  /**
   * A streamed completion (`stream: true`), as a single-use async iterable of chunks: an
   * in-stream error event throws, a stream cut before `[DONE]` throws `OutcomeUnknownError`,
   * and leaving the loop early aborts the request. Resolves once the answer's headers are in.
   */
  async stream(
    params: ChatCompletionParams & { stream_options?: { include_usage?: boolean } },
    options: PostOptions = {},
  ): Promise<Stream<ChatCompletionChunk>> {
    const request = {
      method: 'POST' as const,
      path: '/chat/completions',
      json: { ...params, stream: true },
      headers: { accept: 'text/event-stream' },
      ...businessOptions(options),
    };
    const answer = await this.transport.send(request);
    return new Stream<ChatCompletionChunk>(this.transport, request, answer, this.idleTimeoutMs);
  }
}

export class Chat {
  readonly completions: ChatCompletions;

  constructor(transport: Transport, idleTimeoutMs: number) {
    this.completions = new ChatCompletions(transport, idleTimeoutMs);
  }
}
