import { useCallback, useEffect, useState } from 'react';

/**
 * Loads `read` on mount and on `reload()`; an error is kept for the page to show and handed to
 * `onError` (which signs out on a 401).
 */
export function useLoad<T>(read: () => Promise<T>, onError: (error: unknown) => void) {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const fail = useCallback(
    (failure: unknown) => {
      onError(failure);
      setError(failure);
    },
    [onError],
  );
  const reload = useCallback(() => {
    read().then(setValue).catch(fail);
    // `read` is rebuilt on each render; a page that reads by a changing input calls reload().
  }, [fail]);
  useEffect(reload, [reload]);
  return { value, error, setError, fail, reload };
}
