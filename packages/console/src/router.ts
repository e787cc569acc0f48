import { useEffect, useState } from 'react';

/** The console's pages live under /console; the gateway answers index.html for each. */
export const BASE = '/console';

export function navigate(path: string): void {
  window.history.pushState(null, '', `${BASE}${path}`);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/** The path after /console (`/keys`, `/invite/<token>`, `/` for the overview). */
export function usePath(): string {
  const read = () => window.location.pathname.slice(BASE.length) || '/';
  const [path, setPath] = useState(read);
  useEffect(() => {
    const onChange = () => setPath(read());
    window.addEventListener('popstate', onChange);
    return () => window.removeEventListener('popstate', onChange);
  }, []);
  return path;
}
