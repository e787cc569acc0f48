import type { FastifyReply } from 'fastify';

/** An open Server-Sent Events response: each payload is flushed as its own `data:` event. */
export interface SseWriter {
  send(data: string): void;
  end(): void;
  /** True once the caller went away. */
  readonly closed: boolean;
}

/**
 * Takes the raw response over from Fastify and opens an SSE stream. Headers set on the reply
 * so far (`X-Service-Request-Id`, ...) are carried over.
 */
export function openSse(reply: FastifyReply, extraHeaders: Record<string, string> = {}): SseWriter {
  reply.hijack();
  const raw = reply.raw;
  const headers: Record<string, string | number | string[]> = {};
  for (const [name, value] of Object.entries(reply.getHeaders()))
    if (value !== undefined) headers[name] = value;
  raw.writeHead(200, {
    ...headers,
    ...extraHeaders,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  raw.flushHeaders();
  let closed = false;
  raw.on('close', () => {
    closed = true;
  });
  return {
    send(data) {
      if (!closed) raw.write(`data: ${data}\n\n`);
    },
    end() {
      if (!closed) raw.end();
      closed = true;
    },
    get closed() {
      return closed || raw.destroyed;
    },
  };
}

/** Replays a stored transcript exactly as it was sent. */
export function replaySse(
  reply: FastifyReply,
  requestId: string,
  transcript: readonly string[],
): void {
  void reply.header('x-service-request-id', requestId);
  const writer = openSse(reply, { 'idempotent-replayed': 'true' });
  for (const data of transcript) writer.send(data);
  writer.end();
}
