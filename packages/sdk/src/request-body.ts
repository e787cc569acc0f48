import { sha256 } from './digest.js';

/** A binary request body: bytes, a Blob, a web stream or any async iterable of bytes (a Node stream). */
export type BinaryBody = Uint8Array | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

interface Bodies {
  readonly json?: unknown;
  readonly body?: BinaryBody;
}

/** The body fields of `fetch`'s init: JSON text, bytes, or a stream sent as it is read. */
export function fetchBody(request: Bodies): {
  body?: NonNullable<RequestInit['body']>;
  duplex?: 'half';
} {
  if (request.json !== undefined) return { body: JSON.stringify(request.json) };
  const body = request.body;
  if (body === undefined) return {};
  if (body instanceof Uint8Array || body instanceof Blob) return { body };
  // Node's fetch needs `duplex: 'half'` to send a stream.
  return { body: body instanceof ReadableStream ? body : toWebStream(body), duplex: 'half' };
}

/**
 * `sha256:<hex>` of the body as sent (JSON text or bytes), for the journal; `null` for a
 * stream, which is not read twice.
 */
export async function bodyDigest(request: Bodies): Promise<string | null> {
  if (request.json !== undefined) return sha256(JSON.stringify(request.json));
  if (request.body instanceof Uint8Array) return sha256(request.body);
  if (request.body !== undefined) return null;
  return sha256('');
}

function toWebStream(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done === true) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel(reason) {
      await iterator.return?.(reason);
    },
  });
}
