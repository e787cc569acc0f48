import { useCallback, useEffect, useRef, useState, type DependencyList } from 'react';

/** What a page shows of a read: the value, the error, and how to read again. */
export interface Load<Value> {
  /** The last value read; `null` until the first read succeeds (the page shows "loading"). */
  value: Value | null;
  /** The last failure (of a read, or of an action handed to `fail`); `null` when none. */
  error: unknown;
  setValue: (value: Value) => void;
  setError: (error: unknown) => void;
  /** Reports a failure to `onError` (a 401 signs out) and keeps it for the page to show. */
  fail: (error: unknown) => void;
  /** Reads again, keeping the value shown until the new one arrives. */
  reload: () => void;
}

/**
 * The console's one way to load what a page shows (packages/console/README.md, "Loading"): reads
 * with `read` on mount, whenever one of `deps` changes (the inputs `read` depends on), and on
 * `reload()`; a failure goes to `onError` and to `error`. Only the latest read counts: an older
 * one that ends after it (a filter changed twice) changes nothing. A page that reads several
 * things calls it once for each.
 */
export function useLoad<Value>(
  read: () => Promise<Value>,
  onError: (error: unknown) => void,
  deps: DependencyList = [],
): Load<Value> {
  const [value, setValue] = useState<Value | null>(null);
  const [error, setError] = useState<unknown>(null);
  // The latest `read` and `onError` (rebuilt on each render), without reading again for that.
  const latest = useRef({ read, onError });
  useEffect(() => {
    latest.current = { read, onError };
  });
  const readings = useRef(0);
  const fail = useCallback((failure: unknown) => {
    latest.current.onError(failure);
    setError(failure);
  }, []);
  const reload = useCallback(() => {
    const reading = ++readings.current;
    latest.current.read().then(
      (next) => {
        if (reading === readings.current) setValue(() => next);
      },
      (failure: unknown) => {
        if (reading === readings.current) fail(failure);
      },
    );
  }, [fail]);
  // `deps` are the inputs of `read`: a change reads again.
  useEffect(reload, [reload, ...deps]);
  const set = useCallback((next: Value) => setValue(() => next), []);
  return { value, error, setValue: set, setError, fail, reload };
}
