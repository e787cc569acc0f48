import { createParser } from 'eventsource-parser';
import type { ChatUsage } from '../../chat/chat-types.js';
import { parseUpstream, unverifiableBody } from '../upstream-error.js';
import type { UpstreamClient } from '../upstream-http.js';
import {
  chunkSchema,
  completionSchema,
  type UpstreamChunk,
  type UpstreamUsage,
} from './chat-schemas.js';
import { withFields } from '../../util/with-fields.js';
import type { ChatAnswer, ChatUpstream, StreamEvent } from '../chat-upstream.js';

export type { StreamEvent } from '../chat-upstream.js';

/**
 * An OpenAI-compatible upstream's usage, whatever the provider calls its fields: cached input is
 * `prompt_tokens_details.cached_tokens` (OpenAI, Qwen, Kimi…) or DeepSeek's
 * `prompt_cache_hit_tokens` (its `prompt_tokens` counts hits and misses alike). `undefined` when
 * a detail exceeds its total.
 */
export function toChatUsage(usage: UpstreamUsage): ChatUsage | undefined {
  const cachedTokens =
    usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0;
  const reasoningTokens = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  if (cachedTokens > usage.prompt_tokens || reasoningTokens > usage.completion_tokens)
    return undefined;
  return {
    promptTokens: usage.prompt_tokens,
    completionTokens: usage.completion_tokens,
    cachedTokens,
    reasoningTokens,
  };
}

/**
 * OpenAI-compatible `POST /chat/completions`, plain and streamed: the internal request is its
 * own body, so nothing is translated. It makes no opaque parts and takes none back (a turn
 * carrying some is pinned to the channel that made them, which speaks another protocol).
 */
export class OpenAiChat implements ChatUpstream {
  constructor(private readonly http: UpstreamClient) {}

  async complete(
    body: Record<string, unknown>,
    _options?: unknown,
    signal?: AbortSignal,
  ): Promise<ChatAnswer> {
    const response = await this.http.postJson(
      '/chat/completions',
      withFields(body, { stream: false }),
      signal,
    );
    const data = parseUpstream(
      completionSchema,
      response.json,
      response.upstreamRequestId,
      'chat body',
    );
    const usage = toChatUsage(data.usage);
    if (usage === undefined)
      throw unverifiableBody(response.upstreamRequestId, 'usage details exceed their totals');
    return { completion: data, usage, upstreamRequestId: response.upstreamRequestId };
  }

  /** Opens the stream (usage always requested) and yields checked events as they arrive. */
  async stream(
    body: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ events: AsyncGenerator<StreamEvent>; upstreamRequestId: string | null }> {
    const opened = await this.http.postStream(
      '/chat/completions',
      withFields(body, { stream: true, stream_options: { include_usage: true } }),
      signal,
    );
    return { events: parseEvents(opened.body), upstreamRequestId: opened.upstreamRequestId };
  }
}

async function* parseEvents(body: AsyncIterable<Buffer>): AsyncGenerator<StreamEvent> {
  const pending: string[] = [];
  const parser = createParser({ onEvent: (event) => void pending.push(event.data) });
  const decoder = new TextDecoder();
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    while (pending.length > 0) {
      const data = pending.shift() ?? '';
      if (data === '[DONE]') {
        yield { kind: 'done' };
        return;
      }
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        yield { kind: 'invalid', detail: 'chunk is not JSON' };
        return;
      }
      if (typeof json === 'object' && json !== null && 'error' in json) {
        yield { kind: 'upstream_error' };
        return;
      }
      const parsed = chunkSchema.safeParse(json);
      if (!parsed.success) {
        yield { kind: 'invalid', detail: `chunk: ${parsed.error.issues[0]?.message ?? ''}` };
        return;
      }
      yield { kind: 'chunk', chunk: withUsageLifted(parsed.data) };
    }
  }
}

/**
 * A chunk with its usage where the chat turn reads it: a choice's own `usage` (Moonshot Kimi's
 * last chunk) becomes the chunk's, and no choice keeps one (what reaches a caller is rebuilt from
 * the choices' other fields).
 */
function withUsageLifted(chunk: UpstreamChunk): UpstreamChunk {
  const inChoice = chunk.choices.find((choice) => choice.usage != null)?.usage;
  if (inChoice === undefined || inChoice === null) return chunk;
  return {
    ...chunk,
    choices: chunk.choices.map(({ usage: _usage, ...choice }) => choice),
    usage: chunk.usage ?? inChoice,
  };
}
