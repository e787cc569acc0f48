import { Pool, errors as undiciErrors } from 'undici';
import type { UpstreamConfig } from '../config/schema.js';
import { ApiError } from '../errors/api-error.js';
import { UpstreamFailure, upstreamStatusFailure, unverifiableBody } from './upstream-error.js';

/** Upstream bodies larger than this are refused as unverifiable (protects memory). */
const MAX_UPSTREAM_BODY_BYTES = 64 * 1024 * 1024;

export interface UpstreamResponse {
  readonly json: unknown;
  readonly upstreamRequestId: string | null;
}

/**
 * One keep-alive connection pool per upstream, with connect, first-byte (headers) and idle
 * (body) timeouts. Posts JSON and classifies every failure as `failed` or `unknown`.
 */
export class UpstreamHttp {
  private readonly pool: Pool;
  private readonly basePath: string;

  constructor(
    baseUrl: string,
    private readonly config: UpstreamConfig,
    private readonly apiKey: string | undefined,
  ) {
    const url = new URL(baseUrl);
    this.basePath = url.pathname.replace(/\/$/, '');
    this.pool = new Pool(url.origin, {
      connections: config.connections,
      connect: { timeout: config.timeouts.connect_ms },
      headersTimeout: config.timeouts.first_byte_ms,
      bodyTimeout: config.timeouts.idle_ms,
      keepAliveTimeout: 30_000,
    });
  }

  async postJson(path: string, body: unknown, signal?: AbortSignal): Promise<UpstreamResponse> {
    const response = await this.send(path, body, 'application/json', signal);
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
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): Promise<{ body: AsyncIterable<Buffer>; upstreamRequestId: string | null }> {
    const response = await this.send(path, body, 'text/event-stream', signal);
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

  private async send(path: string, body: unknown, accept: string, signal: AbortSignal | undefined) {
    try {
      return await this.pool.request({
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
    } catch (error) {
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

/** Before the request was sent: `failed`. After (timeouts, resets, oversize): `unknown`. */
export function classifyTransportError(
  error: unknown,
  upstreamRequestId: string | null,
): UpstreamFailure {
  const code = (error as { code?: string }).code ?? '';
  const notSent =
    error instanceof undiciErrors.ConnectTimeoutError ||
    ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'].includes(code);
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
