import type { ErrorBody } from '@tollgate/protocol';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { errorFromEvent, TollgateError } from './errors.js';
import type { Answer, RequestOptions, Transport } from './http.js';

/**
 * A server-sent event stream of JSON chunks (chat completions), read once:
 * - ends at `data: [DONE]`;
 * - an error event (`data: {"error": {...}}`) throws the named error of its code — or
 *   `OutcomeUnknownError` when the original record says `submission_unknown` (an error after
 *   the stream began, docs/billing.md "Stream endings");
 * - a body that ends or breaks before `[DONE]`, or stays silent for `idleTimeoutMs`, throws
 *   `OutcomeUnknownError` (nothing is resent);
 * - leaving the loop early (`break`, a throw) aborts the request.
 */
export class Stream<Chunk> implements AsyncIterable<Chunk> {
  private consumed = false;

  constructor(
    private readonly transport: Transport,
    private readonly request: RequestOptions,
    private readonly answer: Answer,
    private readonly idleTimeoutMs: number,
  ) {}

  /** `X-Service-Request-Id` of the original request. */
  get requestId(): string | undefined {
    return this.answer.requestId;
  }

  /** The `Idempotency-Key` it was sent with: `requests.recover(key)` reads it back. */
  get idempotencyKey(): string {
    return this.answer.idempotencyKey ?? '';
  }

  /** Whether the gateway replayed the stored transcript of an earlier request with this key. */
  get replayed(): boolean {
    return this.answer.replayed;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Chunk> {
    if (this.consumed) throw new TollgateError('a stream can be read only once');
    this.consumed = true;
    const body = this.answer.response.body;
    if (body === null) throw await this.cut(new Error('the answer has no body'));
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const events: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (event) => events.push(event) });
    let finished = false;
    try {
      this.answer.clearTimeout();
      for (;;) {
        const read = await this.readWithin(reader);
        if (read.done) {
          parser.feed(decoder.decode());
          parser.feed('\n\n');
        } else parser.feed(decoder.decode(read.value, { stream: true }));
        while (events.length > 0) {
          const event = events.shift() as EventSourceMessage;
          if (event.data === '[DONE]') {
            finished = true;
            return;
          }
          const data = JSON.parse(event.data) as Chunk | Partial<ErrorBody>;
          if (isErrorEvent(data)) throw await this.errorEvent(data.error);
          yield data as Chunk;
        }
        if (read.done) throw await this.cut(new Error('the stream ended before [DONE]'));
      }
    } catch (error) {
      finished = true;
      if (error instanceof TollgateError) throw error;
      throw await this.cut(error);
    } finally {
      if (!finished) this.answer.abort(); // the caller left the loop early
      this.answer.release();
      reader.releaseLock();
    }
  }

  /** One read, bounded by the idle timeout (a silent stream is an unknown outcome). */
  private async readWithin(
    reader: ReadableStreamDefaultReader<Uint8Array>,
  ): Promise<Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>> {
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.answer.abort();
        reject(new Error(`no event for ${this.idleTimeoutMs} ms`));
      }, this.idleTimeoutMs);
    });
    try {
      return await Promise.race([reader.read(), silent]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async errorEvent(event: ErrorBody['error']): Promise<Error> {
    const error = errorFromEvent(event, this.requestId, this.idempotencyKey);
    const entry = await this.transport.journal.read(this.idempotencyKey);
    return this.transport.classify(error, entry?.kind === 'request' ? entry : undefined);
  }

  private cut(cause: unknown): Promise<Error> {
    return this.transport.lostAnswer(this.request, this.answer, cause, 'stream_cut');
  }
}

function isErrorEvent(data: unknown): data is ErrorBody {
  return typeof data === 'object' && data !== null && 'error' in data && !('choices' in data);
}
