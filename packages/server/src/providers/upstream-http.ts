import { finished, type Readable } from 'node:stream';
import { Pool, type Dispatcher, type buildConnector } from 'undici';
import { chatApiOf, type UpstreamConfig } from '../config/schema.js';
import { eitherGone, presenceOfSignal, type CallerPresence } from './caller-presence.js';
import { classifyTransportError } from './transport-errors.js';
import { UpstreamAdmission } from './upstream-admission.js';
import { ERROR_BODY_BYTES } from './context-length.js';
import {
  upstreamStatusFailure,
  unverifiableBody,
  type RefusalReader,
  type UpstreamFailure,
} from './upstream-error.js';

export { classifyTransportError } from './transport-errors.js';

/** Upstream JSON bodies larger than this are refused as unverifiable (protects memory). */
const MAX_UPSTREAM_BODY_BYTES = 64 * 1024 * 1024;

export interface UpstreamResponse {
  readonly json: unknown;
  readonly upstreamRequestId: string | null;
}

/** Opens upstream sockets; undici's own by default (tests inject failures such as EMFILE). */
export type UpstreamConnector = buildConnector.connector;

/** Who a request is sent for: admission to the pool is fair between accounts. */
export interface UpstreamCaller {
  readonly accountId: string;
  /** Whether the caller went away: a request still waiting for a connection is then dropped unsent. */
  readonly presence?: CallerPresence;
  /**
   * The request record this call is made for, sent as `X-Tollgate-Request-Id` on every call
   * (the same id on a retry on another channel): an upstream offering `request_lookup` answers
   * by it what became of a call whose answer never came (requests/request-reconciler.ts).
   */
  readonly requestId?: string;
}

/** The header naming the request record a call is made for (see `UpstreamCaller.requestId`). */
export const REQUEST_ID_HEADER = 'x-tollgate-request-id';

/** Extra request headers an adapter may send (e.g. `Idempotency-Key` on a task submission). */
export type UpstreamHeaders = Readonly<Record<string, string>>;

/** A binary body being read from the upstream (task outputs); the caller must consume or destroy it. */
export interface UpstreamBinary {
  readonly body: Readable;
  readonly mediaType: string | null;
  readonly bytes: number | null;
}

/**
 * What an adapter sends through: one upstream, on behalf of one caller. A post may pass a
 * `readRefusal`: an error answer's body, read to `ERROR_BODY_BYTES`, is handed to it to
 * recognise (a provider's context-length refusal: context-length.ts); it goes no further.
 */
export interface UpstreamClient {
  postJson(
    path: string,
    body: unknown,
    signal?: AbortSignal,
    headers?: UpstreamHeaders,
    readRefusal?: RefusalReader,
  ): Promise<UpstreamResponse>;
  postStream(
    path: string,
    body: unknown,
    signal?: AbortSignal,
    headers?: UpstreamHeaders,
    readRefusal?: RefusalReader,
  ): Promise<{ body: AsyncIterable<Buffer>; upstreamRequestId: string | null }>;
  /** A read (task status, look-ups); failures are classified as for posts, and reads may be repeated. */
  getJson(path: string, signal?: AbortSignal): Promise<UpstreamResponse>;
  /** A binary read, streamed (never buffered whole); 200 only. */
  getBinary(path: string, signal?: AbortSignal): Promise<UpstreamBinary>;
}

interface Outgoing {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: unknown;
  readonly accept: string;
  readonly signal: AbortSignal | undefined;
  readonly headers?: UpstreamHeaders | undefined;
}

/**
 * One keep-alive connection pool per upstream, with connect, first-byte (headers) and idle
 * (body) timeouts, behind a fair admission queue (`UpstreamAdmission`): a request is handed to
 * the pool only when a connection is free for it, so it never waits inside the pool where a
 * timeout could not tell "not sent" from "maybe done". Classifies every failure as `failed` or
 * `unknown` (transport-errors.ts).
 */
export class UpstreamHttp {
  private readonly pool: Pool;
  private readonly basePath: string;
  private readonly admission: UpstreamAdmission;
  /** Where the upstream's paths start: a result URL under it is read with this client (its key). */
  readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly config: UpstreamConfig,
    private readonly apiKey: string | undefined,
    connector?: UpstreamConnector,
  ) {
    const url = new URL(baseUrl);
    this.baseUrl = baseUrl;
    this.basePath = url.pathname.replace(/\/$/, '');
    this.pool = new Pool(url.origin, {
      connections: config.connections,
      connect: connector ?? { timeout: config.timeouts.connect_ms },
      headersTimeout: config.timeouts.first_byte_ms,
      bodyTimeout: config.timeouts.idle_ms,
      keepAliveTimeout: 30_000,
    });
    this.admission = new UpstreamAdmission({
      capacity: config.connections,
      perAccount: config.connections_per_account ?? Math.max(1, Math.floor(config.connections / 4)),
      queueTimeoutMs: config.queue_timeout_ms,
    });
  }

  /** The client adapters use for one caller's request. */
  for(caller: UpstreamCaller): UpstreamClient {
    return {
      postJson: async (path, body, signal, headers, readRefusal) =>
        readJson(
          await this.send(caller, {
            method: 'POST',
            path,
            body,
            accept: 'application/json',
            signal,
            headers,
          }),
          readRefusal,
        ),
      postStream: async (path, body, signal, headers, readRefusal) =>
        readEventStream(
          await this.send(caller, {
            method: 'POST',
            path,
            body,
            accept: 'text/event-stream',
            signal,
            headers,
          }),
          readRefusal,
        ),
      getJson: async (path, signal) =>
        readJson(
          await this.send(caller, { method: 'GET', path, accept: 'application/json', signal }),
        ),
      getBinary: async (path, signal) =>
        readBinary(await this.send(caller, { method: 'GET', path, accept: '*/*', signal })),
    };
  }

  /** Requests in flight and waiting for a connection. */
  load(): { inFlight: number; waiting: number } {
    return this.admission.counts();
  }

  /**
   * Waits for admission (refusals there are `failed`: nothing left), then sends. The slot is
   * held until the response body is closed, whether read to the end, destroyed or aborted.
   */
  private async send(caller: UpstreamCaller, outgoing: Outgoing): Promise<Dispatcher.ResponseData> {
    const { signal } = outgoing;
    const release = await this.admission.acquire(
      caller.accountId,
      eitherGone(caller.presence, signal === undefined ? undefined : presenceOfSignal(signal)),
    );
    try {
      const response = await this.pool.request({
        path: `${this.basePath}${outgoing.path}`,
        method: outgoing.method,
        headers: {
          accept: outgoing.accept,
          ...(outgoing.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...outgoing.headers,
          ...(caller.requestId === undefined ? {} : { [REQUEST_ID_HEADER]: caller.requestId }),
          ...(this.apiKey === undefined
            ? {}
            : // Anthropic's Messages API takes its key as `x-api-key`.
              chatApiOf(this.config) === 'messages'
              ? { 'x-api-key': this.apiKey }
              : { authorization: `Bearer ${this.apiKey}` }),
        },
        ...(outgoing.body === undefined ? {} : { body: JSON.stringify(outgoing.body) }),
        ...(signal === undefined ? {} : { signal }),
      });
      if (response.body.closed) release();
      else response.body.once('close', release);
      return response;
    } catch (error) {
      release();
      throw classifyTransportError(error, null);
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/**
 * Reads a JSON answer whole (bounded); any status but 200 is a classified failure (an error
 * status's body read only to `ERROR_BODY_BYTES`, for `readRefusal`).
 */
async function readJson(
  response: Dispatcher.ResponseData,
  readRefusal?: RefusalReader,
): Promise<UpstreamResponse> {
  const upstreamRequestId = headerValue(response.headers['x-request-id']);
  const refused = response.statusCode >= 400;
  let text: string;
  try {
    text = refused
      ? await readPrefix(response.body, ERROR_BODY_BYTES)
      : await readLimited(response.body);
  } catch (error) {
    throw classifyTransportError(error, upstreamRequestId);
  }
  if (refused) throw statusFailure(response.statusCode, upstreamRequestId, text, readRefusal);
  if (response.statusCode !== 200)
    throw unverifiableBody(upstreamRequestId, `unexpected status ${response.statusCode}`);
  try {
    return { json: JSON.parse(text) as unknown, upstreamRequestId };
  } catch {
    throw unverifiableBody(upstreamRequestId, 'body is not JSON');
  }
}

/**
 * The open SSE body once the upstream answered 200 with an event stream. Errors before that
 * point are classified like `readJson`'s; errors while reading the body are the caller's to
 * classify with `classifyTransportError`.
 */
async function readEventStream(
  response: Dispatcher.ResponseData,
  readRefusal?: RefusalReader,
): Promise<{ body: AsyncIterable<Buffer>; upstreamRequestId: string | null }> {
  const upstreamRequestId = headerValue(response.headers['x-request-id']);
  await refuseUnless(response, upstreamRequestId, 200, readRefusal);
  const type = headerValue(response.headers['content-type']) ?? '';
  if (!type.startsWith('text/event-stream')) {
    await readLimited(response.body).catch(() => '');
    throw unverifiableBody(upstreamRequestId, `stream answered with ${type}`);
  }
  return { body: response.body, upstreamRequestId };
}

async function readBinary(response: Dispatcher.ResponseData): Promise<UpstreamBinary> {
  await refuseUnless(response, headerValue(response.headers['x-request-id']), 200);
  const length = Number(headerValue(response.headers['content-length']) ?? Number.NaN);
  return {
    body: response.body,
    mediaType: headerValue(response.headers['content-type']),
    bytes: Number.isSafeInteger(length) && length >= 0 ? length : null,
  };
}

/**
 * Reads (to `ERROR_BODY_BYTES`) and throws the classified failure unless the status is
 * `expected`.
 */
async function refuseUnless(
  response: Dispatcher.ResponseData,
  upstreamRequestId: string | null,
  expected: number,
  readRefusal?: RefusalReader,
): Promise<void> {
  if (response.statusCode === expected) return;
  const text = await readPrefix(response.body, ERROR_BODY_BYTES).catch(() => '');
  if (response.statusCode >= 400)
    throw statusFailure(response.statusCode, upstreamRequestId, text, readRefusal);
  throw unverifiableBody(upstreamRequestId, `unexpected status ${response.statusCode}`);
}

/**
 * The failure of an error status: the adapter's `readRefusal` reads the body first (parsed when
 * it is JSON, else `undefined`); what it does not recognise is the status's failure.
 */
function statusFailure(
  status: number,
  upstreamRequestId: string | null,
  text: string,
  readRefusal: RefusalReader | undefined,
): UpstreamFailure {
  if (readRefusal === undefined) return upstreamStatusFailure(status, upstreamRequestId);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return upstreamStatusFailure(status, upstreamRequestId, readRefusal(status, body));
}

/**
 * At most the first `maxBytes` of a body, as text: an error answer is read only as far as it is
 * worth classifying. A longer body is cut there and destroyed (its connection is not reused);
 * the read fails only when the connection does before the bound.
 */
export function readPrefix(body: Readable, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const settle = () => {
      done = true;
      resolve(Buffer.concat(chunks, size).toString('utf8'));
    };
    body.on('data', (chunk: Buffer) => {
      if (done) return;
      const room = maxBytes - size;
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      chunks.push(kept);
      size += kept.length;
      if (size >= maxBytes) {
        settle();
        body.destroy();
      }
    });
    finished(body, (error) => {
      if (done) return;
      if (error) {
        done = true;
        reject(error);
      } else settle();
    });
  });
}

/**
 * The whole body as text, at most `maxBytes`: a body past the bound is destroyed at once and the
 * read fails. Read from the stream's events rather than an async iterator, which costs an
 * iterator and a promise per chunk on every upstream answer.
 */
export function readLimited(
  body: Readable,
  maxBytes: number = MAX_UPSTREAM_BODY_BYTES,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) body.destroy(new Error('upstream body too large'));
      else chunks.push(chunk);
    });
    // Ends, fails, or closes early (ERR_STREAM_PREMATURE_CLOSE), as the iterator would report.
    finished(body, (error) => {
      if (error) reject(error);
      else resolve(Buffer.concat(chunks, size).toString('utf8'));
    });
  });
}

function headerValue(value: string | string[] | undefined): string | null {
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first.length > 200 ? null : first;
}
