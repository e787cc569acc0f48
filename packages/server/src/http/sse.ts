import type { FastifyReply } from 'fastify';

/**
 * One Server-Sent Event: its `data`, and its `event:` name when the dialect names its events
 * (Responses, Anthropic Messages); chat completions send data alone.
 */
export interface SseFrame {
  readonly event?: string;
  readonly data: string;
}

/**
 * A frame as a transcript keeps it (and a replay sends it again): the data alone for an unnamed
 * frame (chat's JSON chunks and `[DONE]`, as every transcript before named frames), else the
 * frame's own text. Data never starts with `event: `, so the two cannot be confused.
 */
export function transcriptEntry(frame: SseFrame): string {
  return frame.event === undefined ? frame.data : `event: ${frame.event}\ndata: ${frame.data}`;
}

function wireText(entry: string): string {
  return entry.startsWith('event: ') ? `${entry}\n\n` : `data: ${entry}\n\n`;
}

/** An open Server-Sent Events response: each frame is flushed as its own event. */
export interface SseWriter {
  /** Sends a transcript entry (`transcriptEntry`): plain data, or a named frame. */
  send(entry: string): void;
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
    send(entry) {
      if (!closed) raw.write(wireText(entry));
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
  for (const entry of transcript) writer.send(entry);
  writer.end();
}
