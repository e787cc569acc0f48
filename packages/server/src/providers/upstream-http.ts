import { Pool, errors as undiciErrors, type buildConnector } from 'undici';
import type { UpstreamConfig } from '../config/schema.js';
import { ApiError } from '../errors/api-error.js';
import { UpstreamAdmission } from './upstream-admission.js';
import { UpstreamFailure, upstreamStatusFailure, unverifiableBody } from './upstream-error.js';

/** Upstream bodies larger than this are refused as unverifiable (protects memory). */
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
  /** Fires when the caller went away: a request still waiting for a connection is then dropped unsent. */
  readonly abandoned?: AbortSignal;
}

/** What an adapter sends through: one upstream, on behalf of one caller. */
export interface UpstreamClient {
  postJson(path: string, body: unknown, signal?: AbortSignal): Promise<UpstreamResponse>;
  postStream(
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): Promise<{ body: AsyncIterable<Buffer>; upstreamRequestId: string | null }>;
}

/**
 * One keep-alive connection pool per upstream, with connect, first-byte (headers) and idle
 * (body) timeouts, behind a fair admission queue (`UpstreamAdmission`): a request is handed to
 * the pool only when a connection is free for it, so it never waits inside the pool where a
 * timeout could not tell "not sent" from "maybe done". Posts JSON and classifies every failure
 * as `failed` or `unknown`.
 */
export class UpstreamHttp {
  private readonly pool: Pool;
  private readonly basePath: string;
  private readonly admission: UpstreamAdmission;

  constructor(
    baseUrl: string,
    private readonly config: UpstreamConfig,
    private readonly apiKey: string | undefined,
    connector?: UpstreamConnector,
  ) {
    const url = new URL(baseUrl);
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
      postJson: (path, body, signal) => this.postJson(caller, path, body, signal),
      postStream: (path, body, signal) => this.postStream(caller, path, body, signal),
    };
  }

  /** Requests in flight and waiting for a connection. */
  load(): { inFlight: number; waiting: number } {
    return this.admission.counts();
  }

  async postJson(
    caller: UpstreamCaller,
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): Promise<UpstreamResponse> {
    const response = await this.send(caller, path, body, 'application/json', signal);
    const upstreamRequestId = headerValue(response.headers['x-request-id']);
    let text: string;
    try {
      text = await readLimited(response.body);
    } catch (error) {
      throw classifyTransportError(error, upstreamRequestId);
    }
    if (response.statusCode >= 400)
      throw upstreamStatusFailure(response.statusCode, upstreamRequestId);
    if (response.statusCode !== 200)
      throw unverifiableBody(upstreamRequestId, `unexpected status ${response.statusCode}`);
    try {
      return { json: JSON.parse(text) as unknown, upstreamRequestId };
    } catch {
      throw unverifiableBody(upstreamRequestId, 'body is not JSON');
    }
  }

  /**
   * Posts and returns the open SSE body once the upstream answered 200 with an event stream.
   * Errors before that point are classified like `postJson`'s; errors while reading the body
   * are the caller's to classify with `classifyTransportError`.
   */
  async postStream(
    caller: UpstreamCaller,
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): Promise<{ body: AsyncIterable<Buffer>; upstreamRequestId: string | null }> {
    const response = await this.send(caller, path, body, 'text/event-stream', signal);
    const upstreamRequestId = headerValue(response.headers['x-request-id']);
    if (response.statusCode !== 200) {
      await readLimited(response.body).catch(() => '');
      if (response.statusCode >= 400)
        throw upstreamStatusFailure(response.statusCode, upstreamRequestId);
      throw unverifiableBody(upstreamRequestId, `unexpected status ${response.statusCode}`);
    }
    const type = headerValue(response.headers['content-type']) ?? '';
    if (!type.startsWith('text/event-stream')) {
      await readLimited(response.body).catch(() => '');
      throw unverifiableBody(upstreamRequestId, `stream answered with ${type}`);
    }
    return { body: response.body, upstreamRequestId };
  }

  /**
   * Waits for admission (refusals there are `failed`: nothing left), then sends. The slot is
   * held until the response body is closed, whether read to the end, destroyed or aborted.
   */
  private async send(
    caller: UpstreamCaller,
    path: string,
    body: unknown,
    accept: string,
    signal: AbortSignal | undefined,
  ) {
    const abandoned =
      signal === undefined
        ? caller.abandoned
        : caller.abandoned === undefined
          ? signal
          : AbortSignal.any([signal, caller.abandoned]);
    const release = await this.admission.acquire(caller.accountId, abandoned);
    try {
      const response = await this.pool.request({
        path: `${this.basePath}${path}`,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept,
          ...(this.apiKey === undefined ? {} : { authorization: `Bearer ${this.apiKey}` }),
        },
        body: JSON.stringify(body),
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

async function readLimited(
  body: AsyncIterable<Buffer> & { destroy?: () => void },
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_UPSTREAM_BODY_BYTES) {
      body.destroy?.();
      throw new Error('upstream body too large');
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function headerValue(value: string | string[] | undefined): string | null {
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first.length > 200 ? null : first;
}

/**
 * Errors that can only happen while opening a connection, before any byte of the request left:
 * the upstream refused or cannot be found, or this process could not make a socket at all
 * (out of file descriptors, no local port or address). Each is a certain non-delivery.
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EMFILE',
  'ENFILE',
  'EADDRNOTAVAIL',
  'EADDRINUSE',
]);

/** Before the request was sent: `failed`. After (timeouts, resets, oversize): `unknown`. */
export function classifyTransportError(
  error: unknown,
  upstreamRequestId: string | null,
): UpstreamFailure {
  const code = (error as { code?: string }).code ?? '';
  const notSent = error instanceof undiciErrors.ConnectTimeoutError || NOT_SENT_CODES.has(code);
  if (notSent) {
    return new UpstreamFailure(
      'failed',
      new ApiError(
        'MODEL_UNAVAILABLE',
        "the model's upstream cannot be reached; nothing was sent or charged",
      ),
      upstreamRequestId,
      `connect: ${code}`,
    );
  }
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError
  ) {
    return new UpstreamFailure(
      'unknown',
      new ApiError(
        'UPSTREAM_TIMEOUT',
        'the upstream did not answer in time; the outcome is unknown: read the original request, do not send it again',
      ),
      upstreamRequestId,
      `timeout: ${code}`,
    );
  }
  return new UpstreamFailure(
    'unknown',
    new ApiError(
      'UPSTREAM_ERROR',
      'the connection to the upstream broke after the request was sent; the outcome is unknown: read the original request',
    ),
    upstreamRequestId,
    `transport: ${code || (error as Error).message}`,
  );
}
