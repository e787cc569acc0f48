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
import { openAiUsage } from '../../chat/usage-fields.js';
import { PROVIDER_DIALECTS, type ProviderDialect } from './provider-dialects.js';
import type { ChatAnswer, ChatUpstream, StreamEvent } from '../chat-upstream.js';

export type { StreamEvent } from '../chat-upstream.js';

/**
 * An OpenAI-compatible usage object read the OpenAI way (every known placement of cache reads
 * included): for callers that know no provider (the request look-up, the chat-completions
 * presenter of an already-normalised usage). `undefined` when a detail exceeds its total.
 */
export function toChatUsage(usage: UpstreamUsage): ChatUsage | undefined {
  return PROVIDER_DIALECTS.openai.usage(usage);
}

/**
 * OpenAI-compatible `POST /chat/completions`, plain and streamed: the internal request is its
 * own body, with the provider's request rules applied (`dialect`: provider-dialects.ts), and the
 * answer's usage read the provider's way — handed on as the internal record and shown to the
 * caller in OpenAI's shape. It makes no opaque parts and takes none back (a turn carrying some is
 * pinned to the channel that made them, which speaks another protocol).
 */
export class OpenAiChat implements ChatUpstream {
  constructor(
    private readonly http: UpstreamClient,
    private readonly dialect: ProviderDialect = PROVIDER_DIALECTS.openai,
  ) {}

  /** The body as this provider takes it: its output cap's name. */
  private requestBody(body: Record<string, unknown>): Record<string, unknown> {
    if (this.dialect.tokenLimitField !== 'max_tokens' || body['max_completion_tokens'] == null)
      return body;
    const { max_completion_tokens: cap, ...rest } = body;
    return { ...rest, max_tokens: cap };
  }

  async complete(
    body: Record<string, unknown>,
    _options?: unknown,
    signal?: AbortSignal,
  ): Promise<ChatAnswer> {
    const response = await this.http.postJson(
      '/chat/completions',
      withFields(this.requestBody(body), { stream: false }),
      signal,
    );
    const data = parseUpstream(
      completionSchema,
      response.json,
      response.upstreamRequestId,
      'chat body',
    );
    const usage = this.dialect.usage(data.usage);
    if (usage === undefined)
      throw unverifiableBody(response.upstreamRequestId, 'usage details contradict each other');
    return {
      completion: { ...data, usage: openAiUsage(usage) },
      usage,
      upstreamRequestId: response.upstreamRequestId,
    };
  }

  /**
   * Opens the stream (usage asked for where the provider takes `stream_options`; the others send
   * it unasked) and yields checked events as they arrive.
   */
  async stream(
    body: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ events: AsyncGenerator<StreamEvent>; upstreamRequestId: string | null }> {
    const opened = await this.http.postStream(
      '/chat/completions',
      withFields(this.requestBody(body), {
        stream: true,
        ...(this.dialect.streamOptions ? { stream_options: { include_usage: true } } : {}),
      }),
      signal,
    );
    return {
      events: parseEvents(opened.body, this.dialect),
      upstreamRequestId: opened.upstreamRequestId,
    };
  }
}

async function* parseEvents(
  body: AsyncIterable<Buffer>,
  dialect: ProviderDialect,
): AsyncGenerator<StreamEvent> {
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
      const chunk = withUsageLifted(parsed.data);
      if (chunk.usage == null) {
        yield { kind: 'chunk', chunk };
        continue;
      }
      const usage = dialect.usage(chunk.usage);
      if (usage === undefined) {
        yield { kind: 'invalid', detail: 'usage details contradict each other' };
        return;
      }
      yield { kind: 'chunk', chunk: { ...chunk, usage: openAiUsage(usage) }, usage };
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
