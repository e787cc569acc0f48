import { createParser } from 'eventsource-parser';
import type { ChatUsage } from '../../chat/chat-types.js';
import { notCarried, parseUpstream, unverifiableBody } from '../upstream-error.js';
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
import { contextLengthReader } from '../context-length.js';
import { withServedTier } from '../served-tier.js';
import { dialectRequest } from './dialect-request.js';
import { sealedChunk, sealedCompletion } from './thought-signatures.js';
import type { ChatAnswer, ChatCallOptions, ChatUpstream, StreamEvent } from '../chat-upstream.js';

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
 * own body, with the provider's request rules applied (`dialect`: provider-dialects.ts, applied
 * by dialect-request.ts), and the answer's usage read the provider's way — handed on as the
 * internal record and shown to the caller in OpenAI's shape. The only opaque state it carries
 * is Gemini's thought signature, which travels on its tool call (thought-signatures.ts); opaque
 * parts placed between messages are another protocol's, and refused. The provider's
 * context-length refusal is read by its dialect's rule (context-length.ts).
 */
export class OpenAiChat implements ChatUpstream {
  constructor(
    private readonly http: UpstreamClient,
    private readonly dialect: ProviderDialect = PROVIDER_DIALECTS.openai,
  ) {}

  /** The body as this provider takes it (dialect-request.ts); throws `notCarried`. */
  private requestBody(
    body: Record<string, unknown>,
    options: ChatCallOptions | undefined,
  ): Record<string, unknown> {
    const placed = options?.opaque[0];
    if (placed !== undefined)
      throw notCarried(
        placed.path,
        `holds ${placed.kind} state, which an OpenAI-compatible chat upstream cannot read`,
      );
    return dialectRequest(body, this.dialect, options?.channel ?? '');
  }

  async complete(
    body: Record<string, unknown>,
    options?: ChatCallOptions,
    signal?: AbortSignal,
  ): Promise<ChatAnswer> {
    const response = await this.http.postJson(
      '/chat/completions',
      withFields(this.requestBody(body, options), { stream: false }),
      signal,
      undefined,
      contextLengthReader(this.dialect.name, options?.model),
    );
    const data = parseUpstream(
      completionSchema,
      response.json,
      response.upstreamRequestId,
      'chat body',
    );
    const read = this.dialect.usage(data.usage);
    if (read === undefined)
      throw unverifiableBody(response.upstreamRequestId, 'usage details contradict each other');
    const usage = withServedTier(read, data.service_tier);
    const completion = sealedCompletion(data, this.dialect, options?.channel ?? '');
    return {
      completion: { ...completion, usage: openAiUsage(usage) },
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
    options?: ChatCallOptions,
  ): Promise<{ events: AsyncGenerator<StreamEvent>; upstreamRequestId: string | null }> {
    const opened = await this.http.postStream(
      '/chat/completions',
      withFields(this.requestBody(body, options), {
        stream: true,
        ...(this.dialect.streamOptions ? { stream_options: { include_usage: true } } : {}),
      }),
      signal,
      undefined,
      contextLengthReader(this.dialect.name, options?.model),
    );
    return {
      events: parseEvents(opened.body, this.dialect, options?.channel ?? ''),
      upstreamRequestId: opened.upstreamRequestId,
    };
  }
}

async function* parseEvents(
  body: AsyncIterable<Buffer>,
  dialect: ProviderDialect,
  channel: string,
): AsyncGenerator<StreamEvent> {
  const pending: string[] = [];
  const parser = createParser({ onEvent: (event) => void pending.push(event.data) });
  const decoder = new TextDecoder();
  // Every chunk names the tier; the usage, in the last one, is billed at the last one named.
  let servedTier: string | null | undefined;
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
      const chunk = sealedChunk(withUsageLifted(parsed.data), dialect, channel);
      servedTier = chunk.service_tier ?? servedTier;
      if (chunk.usage == null) {
        yield { kind: 'chunk', chunk };
        continue;
      }
      const read = dialect.usage(chunk.usage);
      if (read === undefined) {
        yield { kind: 'invalid', detail: 'usage details contradict each other' };
        return;
      }
      const usage = withServedTier(read, servedTier);
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
