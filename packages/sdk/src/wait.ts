import { AbortedError } from './errors.js';

/** How `generate` and `recover` wait between reads: doubling from `initialMs` up to `maxMs`, for at most `timeoutMs`. */
export interface Backoff {
  initialMs?: number;
  maxMs?: number;
  timeoutMs?: number;
}

/** Resolves after `ms`, or rejects with `AbortedError` when `signal` aborts (nothing is in flight). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  const aborted = () =>
    new AbortedError('waiting between reads aborted by the caller', {
      idempotencyKey: undefined,
      requestId: undefined,
      outcomeUnknown: false,
      cause: signal?.reason,
    });
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(aborted());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Calls `read` until `done` says so, waiting with back-off in between. Returns the final read,
 * or `{ timedOut: true, last }` when `timeoutMs` passed first.
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  backoff: Backoff,
  signal?: AbortSignal,
  /** A delay the server asked for (429 `Retry-After`), to wait instead of the back-off once. */
  delayAsked?: (error: unknown) => number | undefined,
): Promise<{ value: T; timedOut: boolean; waitedMs: number }> {
  const started = Date.now();
  const timeoutMs = backoff.timeoutMs ?? 10 * 60_000;
  let delay = backoff.initialMs ?? 500;
  for (;;) {
    let value: T | undefined;
    let asked: number | undefined;
    try {
      value = await read();
    } catch (error) {
      asked = delayAsked?.(error);
      if (asked === undefined) throw error;
    }
    const waitedMs = Date.now() - started;
    if (value !== undefined && done(value)) return { value, timedOut: false, waitedMs };
    if (waitedMs >= timeoutMs) {
      if (value !== undefined) return { value, timedOut: true, waitedMs };
      value = await read();
      return { value, timedOut: !done(value), waitedMs };
    }
    await sleep(Math.min(asked ?? delay, Math.max(0, timeoutMs - waitedMs)), signal);
    delay = Math.min(delay * 2, backoff.maxMs ?? 5_000);
  }
}
