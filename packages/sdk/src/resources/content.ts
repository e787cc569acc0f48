import type { Transport } from '../http.js';
import type { CallOptions } from '../types.js';
import { callOptions } from './shared.js';

/** Bytes `start` to `end` (both included; `end` omitted: to the end), or the `last` n bytes. */
export type ByteRange = { start: number; end?: number } | { last: number };

export interface ContentOptions extends CallOptions {
  range?: ByteRange;
}

/** A content download (asset, video, H3 video): 200 whole, or 206 the asked range. */
export interface Content {
  status: 200 | 206;
  contentType: string | null;
  /** Bytes in this answer. */
  contentLength: number | null;
  /** `bytes a-b/size` on a 206. */
  contentRange: string | null;
  etag: string | null;
  /** The body, read as it arrives (read it once: either this or `bytes()`). */
  body: ReadableStream<Uint8Array>;
  /** Reads the whole body. */
  bytes(): Promise<Uint8Array>;
}

/**
 * `GET` of a content path with the creating key (`Range` supported). Reads are not business
 * requests: nothing is journaled, and a failure is a `ConnectionError` or the named error.
 */
export async function download(
  transport: Transport,
  path: string,
  options: ContentOptions = {},
): Promise<Content> {
  const headers: Record<string, string> = { accept: '*/*' };
  if (options.range !== undefined) headers['range'] = rangeHeader(options.range);
  const answer = await transport.send({ method: 'GET', path, headers, ...callOptions(options) });
  answer.release();
  const response = answer.response;
  const number = (name: string) => {
    const value = response.headers.get(name);
    return value === null ? null : Number(value);
  };
  return {
    status: response.status === 206 ? 206 : 200,
    contentType: response.headers.get('content-type'),
    contentLength: number('content-length'),
    contentRange: response.headers.get('content-range'),
    etag: response.headers.get('etag'),
    body: response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() }),
    bytes: async () => new Uint8Array(await response.arrayBuffer()),
  };
}

function rangeHeader(range: ByteRange): string {
  const whole = (value: number) => {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`bad byte offset ${value}`);
    return value;
  };
  if ('last' in range) return `bytes=-${whole(range.last)}`;
  return `bytes=${whole(range.start)}-${range.end === undefined ? '' : whole(range.end)}`;
}
