import { useEffect, useState } from 'react';

/** The console's pages live under /console; the gateway answers index.html for each. */
export const BASE = '/console';

export function navigate(path: string): void {
  window.history.pushState(null, '', `${BASE}${path}`);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/**
 * The path after /console (`/keys`, `/invite/<token>`, `/` for the overview), without a
 * trailing slash (`/console/keys/` is `/keys`).
 */
export function usePath(): string {
  const read = () => window.location.pathname.slice(BASE.length).replace(/\/+$/, '') || '/';
  const [path, setPath] = useState(read);
  useEffect(() => {
    const onChange = () => setPath(read());
    window.addEventListener('popstate', onChange);
    return () => window.removeEventListener('popstate', onChange);
  }, []);
  return path;
}

/** Signed in, the sign-in and sign-up addresses are the overview (a bookmark, the back button). */
export function signedInPath(path: string): string {
  return path === '/sign-in' || path === '/sign-up' ? '/' : path;
}

/** The operator pages' addresses (`/admin`, `/admin/...`): a member is refused them (403). */
export function isOperatorPath(path: string): boolean {
  return path === '/admin' || path.startsWith('/admin/');
}
