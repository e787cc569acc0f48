import {
  AbortedError,
  ConnectionError,
  errorFromAnswer,
  InternalServerError,
  NotFoundError,
  OutcomeUnknownError,
  type APIError,
} from './errors.js';
import type { RequestEntry, RequestJournal } from './journal.js';
import { bodyDigest, fetchBody, type BinaryBody } from './request-body.js';

export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

export interface TransportOptions {
  /** The gateway's base URL, ending with `/v1`. */
  readonly baseURL: string;
  readonly apiKey: string;
  readonly fetch: Fetch;
  /** Milliseconds until the answer's headers (and, for JSON, its body) must have arrived. */
  readonly timeoutMs: number;
  readonly journal: RequestJournal;
  readonly newIdempotencyKey: () => string;
}

export type { BinaryBody };

export interface RequestOptions {
  readonly method: 'GET' | 'HEAD' | 'POST' | 'DELETE';
  /** Relative to the base URL (`/embeddings`), or a gateway path starting with `/v1/`. */
  readonly path: string;
  readonly query?: Record<string, string | number | boolean | undefined>;
  readonly json?: unknown;
  readonly body?: BinaryBody;
  readonly headers?: Record<string, string>;
  /**
   * Marks a business POST: it is sent with an `Idempotency-Key` (this one, or a new UUID),
   * journaled before it is sent, and a failure after sending is an `OutcomeUnknownError`.
   */
  readonly business?: { readonly idempotencyKey?: string; readonly jobKey?: string };
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** An answer with a 2xx status, its body not read yet. */
export interface Answer {
  readonly response: Response;
  readonly requestId: string | undefined;
  /** The key a business POST was sent with. */
  readonly idempotencyKey: string | undefined;
  /** `Idempotent-Replayed: true`: the gateway answered a repeat with the original's answer. */
  readonly replayed: boolean;
  /** Stops the timeout (a stream calls it once its body flows). */
  readonly clearTimeout: () => void;
  /**
   * Stops the timeout and unhooks the caller's signal: once the body is read (JSON), the
   * stream has ended, or the body is handed to the caller (downloads).
   */
  readonly release: () => void;
  /** Whether the client's timeout aborted the request. */
  readonly timedOut: () => boolean;
  /** Whether the caller's signal aborted the request (and not the client's timeout). */
  readonly callerAborted: () => boolean;
  /** Aborts the request (an early `break` out of a stream). */
  readonly abort: () => void;
}

/**
 * The one place requests are sent. No retries, ever: each call sends at most once. Business
 * POSTs are journaled (`sending`) before they leave and updated with the outcome; a timeout,
 * a reset or an answer whose record says `submission_unknown` becomes `OutcomeUnknownError`.
 */
export class Transport {
  constructor(private readonly options: TransportOptions) {}

  get journal(): RequestJournal {
    return this.options.journal;
  }

  /** Sends the request and parses a JSON answer. Error statuses throw their named error. */
  async json<T>(request: RequestOptions): Promise<{ data: T; answer: Answer }> {
    const answer = await this.send(request);
    try {
      const text = await answer.response.text();
      return { data: (text === '' ? undefined : JSON.parse(text)) as T, answer };
    } catch (cause) {
      throw await this.lostAnswer(request, answer, cause);
    } finally {
      answer.release();
    }
  }

  /** Sends the request; resolves with the answer once its headers are in (2xx, 206, 304). */
  async send(request: RequestOptions): Promise<Answer> {
    if (request.signal?.aborted === true) throw notSent(request, undefined);
    const idempotencyKey = request.business
      ? (request.business.idempotencyKey ?? this.options.newIdempotencyKey())
      : undefined;
    // Written before anything is sent: a crash from here on leaves the key to recover by.
    const entry =
      idempotencyKey === undefined ? undefined : await this.journalSending(request, idempotencyKey);

    const controller = new AbortController();
    const timeoutMs = request.timeoutMs ?? this.options.timeoutMs;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onAbort = () => controller.abort(request.signal?.reason);
    request.signal?.addEventListener('abort', onAbort, { once: true });
    const callerAborted = () => !timedOut && request.signal?.aborted === true;
    const stopTimer = () => {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
    };
    // Aborted while the journal was written: the listener above came too late to fire.
    if (callerAborted()) {
      stopTimer();
      if (entry !== undefined) await this.update(entry, { state: 'not_sent' });
      throw notSent(request, entry?.key);
    }
    let response: Response;
    try {
      response = await this.options.fetch(this.url(request), {
        method: request.method,
        headers: this.headers(request, idempotencyKey),
        signal: controller.signal,
        ...fetchBody(request),
      });
    } catch (cause) {
      stopTimer();
      if (callerAborted()) throw await this.aborted(request, idempotencyKey, undefined, cause);
      if (entry === undefined)
        throw new ConnectionError(transportMessage(request, cause), { cause });
      if (neverSent(cause) && !timedOut) {
        await this.update(entry, { state: 'not_sent' });
        throw new ConnectionError(transportMessage(request, cause), { cause });
      }
      await this.update(entry, { state: 'unknown' });
      const reason = timedOut ? 'timeout' : 'connection';
      throw new OutcomeUnknownError({ ...describe(entry), requestId: undefined, reason, cause });
    }

    const requestId = response.headers.get('x-service-request-id') ?? undefined;
    if (entry !== undefined)
      await this.update(entry, {
        state: 'answered',
        status: response.status,
        ...(requestId === undefined ? {} : { requestId }),
      });
    if (!response.ok && response.status !== 304) {
      const body = await response.json().catch(() => undefined);
      stopTimer();
      throw await this.classify(
        errorFromAnswer(response.status, body, response.headers, idempotencyKey),
        entry,
      );
    }
    return {
      response,
      requestId,
      idempotencyKey,
      replayed: response.headers.get('idempotent-replayed') === 'true',
      clearTimeout: () => clearTimeout(timer),
      release: stopTimer,
      timedOut: () => timedOut,
      callerAborted,
      abort: () => controller.abort(new Error('aborted by the caller')),
    };
  }

  /**
   * A 5xx answer to a business POST may mean the work was done, or not: the original record
   * decides (a read, never a resend). `submission_unknown` (or a record still `processing`)
   * becomes `OutcomeUnknownError`; a record that failed, or none at all, keeps the error.
   * `UPSTREAM_TIMEOUT` is always unknown (docs/errors.md).
   */
  async classify(error: APIError, entry: RequestEntry | undefined): Promise<Error> {
    if (entry === undefined || !(error instanceof InternalServerError)) return error;
    let unknown = error.code === 'UPSTREAM_TIMEOUT';
    if (!unknown) {
      try {
        const { data } = await this.json<{ status: string }>({
          method: 'GET',
          path: '/requests',
          query: { idempotency_key: entry.key },
        });
        unknown = data.status === 'submission_unknown' || data.status === 'processing';
      } catch (readError) {
        // No record: nothing was done. The record could not be read: assume the worst.
        unknown = !(readError instanceof NotFoundError);
      }
    }
    if (!unknown) return error;
    await this.update(entry, { state: 'unknown' });
    return new OutcomeUnknownError({
      ...describe(entry),
      requestId: error.requestId,
      reason: 'submission_unknown',
      cause: error,
    });
  }

  /**
   * The error for an answer whose body broke off (reset, timeout, cut stream): unknown for a
   * business POST, whose journal entry says so.
   */
  async lostAnswer(
    request: RequestOptions,
    answer: Pick<Answer, 'idempotencyKey' | 'requestId' | 'timedOut' | 'callerAborted'>,
    cause: unknown,
    reason: 'connection' | 'stream_cut' = 'connection',
  ): Promise<Error> {
    if (answer.callerAborted())
      return this.aborted(request, answer.idempotencyKey, answer.requestId, cause);
    if (answer.idempotencyKey === undefined)
      return new ConnectionError(transportMessage(request, cause), { cause });
    const entry = await this.journal.read(answer.idempotencyKey);
    if (entry?.kind === 'request') await this.update(entry, { state: 'unknown' });
    return new OutcomeUnknownError({
      idempotencyKey: answer.idempotencyKey,
      requestId: answer.requestId,
      method: request.method,
      path: request.path,
      reason: answer.timedOut() ? 'timeout' : reason,
      cause,
    });
  }

  /**
   * The error for a call the caller's signal aborted once it may have left: a business POST's
   * outcome is unknown (its journal entry says so); a read did nothing.
   */
  private async aborted(
    request: RequestOptions,
    idempotencyKey: string | undefined,
    requestId: string | undefined,
    cause: unknown,
  ): Promise<AbortedError> {
    if (idempotencyKey !== undefined) {
      const entry = await this.journal.read(idempotencyKey);
      if (entry?.kind === 'request') await this.update(entry, { state: 'unknown' });
    }
    return new AbortedError(`${request.method} ${request.path} aborted by the caller`, {
      idempotencyKey,
      requestId,
      outcomeUnknown: idempotencyKey !== undefined,
      cause,
    });
  }

  /** Adds what became known (a task id, a state) to a request's journal entry. */
  async update(entry: RequestEntry, change: Partial<RequestEntry>): Promise<RequestEntry> {
    const current = await this.journal.read(entry.key);
    const next: RequestEntry = {
      ...(current?.kind === 'request' ? current : entry),
      ...change,
      updatedAt: new Date().toISOString(),
    };
    await this.journal.write(next);
    return next;
  }

  /** A gateway path (`/v1/…`, as task bodies give them) or a base-relative path, as a URL. */
  url(request: Pick<RequestOptions, 'path' | 'query'>): string {
    const base = this.options.baseURL.replace(/\/+$/, '');
    const relative = request.path.startsWith('/v1/') ? request.path.slice(3) : request.path;
    const url = new URL(base + relative);
    for (const [name, value] of Object.entries(request.query ?? {}))
      if (value !== undefined) url.searchParams.set(name, String(value));
    return url.toString();
  }

  private async journalSending(request: RequestOptions, key: string): Promise<RequestEntry> {
    const now = new Date().toISOString();
    const entry: RequestEntry = {
      kind: 'request',
      key,
      method: request.method,
      path: request.path,
      bodyDigest: await bodyDigest(request),
      state: 'sending',
      ...(request.business?.jobKey === undefined ? {} : { jobKey: request.business.jobKey }),
      createdAt: now,
      updatedAt: now,
    };
    await this.journal.write(entry);
    return entry;
  }

  private headers(request: RequestOptions, idempotencyKey: string | undefined): Headers {
    const headers = new Headers(request.headers);
    headers.set('authorization', `Bearer ${this.options.apiKey}`);
    if (!headers.has('accept')) headers.set('accept', 'application/json');
    if (idempotencyKey !== undefined) headers.set('idempotency-key', idempotencyKey);
    if (request.json !== undefined) headers.set('content-type', 'application/json');
    return headers;
  }
}

/** A call aborted before it was sent: nothing was done. */
function notSent(request: RequestOptions, idempotencyKey: string | undefined): AbortedError {
  return new AbortedError(`${request.method} ${request.path} not sent: aborted by the caller`, {
    idempotencyKey,
    requestId: undefined,
    outcomeUnknown: false,
    cause: request.signal?.reason,
  });
}

function describe(entry: RequestEntry) {
  return { idempotencyKey: entry.key, method: entry.method, path: entry.path };
}

/** Node's fetch: `TypeError('fetch failed')` whose cause says the connection was never made. */
function neverSent(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  const code = cause?.code;
  return (
    typeof code === 'string' &&
    [
      'ECONNREFUSED',
      'ENOTFOUND',
      'EAI_AGAIN',
      'UND_ERR_CONNECT_TIMEOUT',
      'UND_ERR_INVALID_ARG',
    ].includes(code)
  );
}

function transportMessage(request: RequestOptions, cause: unknown): string {
  const detail = cause instanceof Error ? cause.message : String(cause);
  return `${request.method} ${request.path} failed: ${detail}`;
}
