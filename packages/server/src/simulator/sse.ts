import type { ServerResponse } from 'node:http';
import type { Directives } from './directives.js';

/** How one wire format writes its stream: each event, the mid-stream failure, and the end. */
export interface EventWire<Event> {
  /** The SSE text of the event sent as number `sent` (0-based). */
  format(event: Event, sent: number): string;
  /** The SSE text that reports a failure after `sent` events; the stream ends after it. */
  failure(sent: number): string;
  /** The SSE text written after the last event (`''`: none). */
  ending: string;
}

/**
 * Sends the events of one streamed answer with the stream fault directives of every dialect:
 * `[sim:cut_after=N]` drops the connection after N events (the ending is not sent),
 * `[sim:stall_after=N]` goes silent after N events with the connection open, and
 * `[sim:error_after=N]` sends the wire's failure after N events and ends the stream. A directive
 * whose N is reached only once every event is sent: a cut still drops the connection, a stall or
 * an error no longer applies. Events are built one at a time as they are sent, so a long answer
 * never holds all its events at once.
 */
export async function sendEvents<Event>(
  response: ServerResponse,
  events: Iterable<Event>,
  directives: Directives,
  wire: EventWire<Event>,
): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let sent = 0;
  for (const event of events) {
    if (directives.cutAfter !== undefined && sent >= directives.cutAfter) {
      response.destroy();
      return;
    }
    // Stop sending but keep the connection open: the client's idle timeout must end it.
    if (directives.stallAfter !== undefined && sent >= directives.stallAfter) return;
    if (directives.errorAfter !== undefined && sent >= directives.errorAfter) {
      response.end(wire.failure(sent));
      return;
    }
    response.write(wire.format(event, sent));
    sent += 1;
    // Let each event leave as its own write, like a real model producing tokens.
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (directives.cutAfter !== undefined && sent >= directives.cutAfter) {
    response.destroy();
    return;
  }
  response.end(wire.ending === '' ? undefined : wire.ending);
}

/** Word-sized pieces (a word and the spaces after it), one at a time; all-space text is one piece. */
export function* words(text: string | null | undefined): Generator<string> {
  if (text === null || text === undefined || text === '') return;
  const piece = /\S+\s*/g;
  let found = false;
  for (let match = piece.exec(text); match !== null; match = piece.exec(text)) {
    found = true;
    yield match[0];
  }
  if (!found) yield text;
}

/** Pieces of at most `size` characters (tool-call arguments streamed as partial JSON). */
export function* slices(text: string, size: number): Generator<string> {
  for (let start = 0; start < text.length; start += size) yield text.slice(start, start + size);
}
