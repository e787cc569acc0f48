/**
 * Whether the caller of a request is still there. Read on every request (before sending, before a
 * failover) but listened to only by a request that must wait for an upstream connection
 * (upstream-admission.ts): so nothing is allocated or registered per request until then. An
 * `AbortController` per request and a `close` listener on its response cost more than every
 * other step of the caller's bookkeeping (bench/RESULTS.md, "The caller's presence, read lazily").
 */
export interface CallerPresence {
  /** True once the caller went away before its answer. */
  readonly gone: boolean;
  /** Calls `listener` once when the caller goes (never if it already went); returns what stops listening. */
  whenGone(listener: () => void): () => void;
}

/** An `AbortSignal` as a presence: gone once aborted (a call's own deadline or stop). */
export function presenceOfSignal(signal: AbortSignal): CallerPresence {
  return {
    get gone() {
      return signal.aborted;
    },
    whenGone(listener) {
      signal.addEventListener('abort', listener, { once: true });
      return () => signal.removeEventListener('abort', listener);
    },
  };
}

/** Gone when either is gone; what is not given never goes. */
export function eitherGone(
  first: CallerPresence | undefined,
  second: CallerPresence | undefined,
): CallerPresence | undefined {
  if (first === undefined) return second;
  if (second === undefined) return first;
  return {
    get gone() {
      return first.gone || second.gone;
    },
    whenGone(listener) {
      let called = false;
      const once = () => {
        if (called) return;
        called = true;
        stopFirst();
        stopSecond();
        listener();
      };
      const stopFirst = first.whenGone(once);
      const stopSecond = second.whenGone(once);
      return () => {
        stopFirst();
        stopSecond();
      };
    },
  };
}
