/** Why this gateway itself stopped reading an upstream stream before its end. */
export type StreamCut = 'shutdown' | 'over_cap';

/** One stream being read: its stop, and the promise its end resolves. */
interface Reading {
  readonly stop: (cut: StreamCut) => void;
}

/**
 * The streamed chats this instance is reading from their upstreams, whether or not their callers
 * are still connected. A caller that goes away no longer ends the reading (http/streamed-chat.ts:
 * the upstream is read to its end and billed), so a closed HTTP server no longer means that
 * every stream ended: closing the app waits for `drained` before the database closes, and a
 * shutdown whose grace ran out `cut`s what is left (each is then recorded as cut off, its
 * outcome unknown, as after a crash).
 */
export class StreamsInFlight {
  readonly #reading = new Set<Reading>();
  #waiters: (() => void)[] = [];

  /** Registers a stream; the returned function is called once it is recorded (any ending). */
  begin(stop: (cut: StreamCut) => void): () => void {
    const reading: Reading = { stop };
    this.#reading.add(reading);
    return () => {
      this.#reading.delete(reading);
      if (this.#reading.size > 0) return;
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const resolve of waiters) resolve();
    };
  }

  /** How many streams are being read now. */
  get count(): number {
    return this.#reading.size;
  }

  /** Resolves once no stream is being read (at once when none is). */
  drained(): Promise<void> {
    if (this.#reading.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Stops reading every stream (the shutdown's grace ran out); answers how many it stopped. */
  cut(): number {
    const reading = [...this.#reading];
    for (const { stop } of reading) stop('shutdown');
    return reading.length;
  }
}
