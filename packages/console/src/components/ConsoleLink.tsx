import type { ReactNode } from 'react';
import { BASE, navigate } from '../router.js';

/** A link to a console page (`to` is the path after /console): a real href, no reload. */
export function ConsoleLink({ to, children }: { to: string; children: ReactNode }) {
  return (
    <a
      href={`${BASE}${to}`}
      onClick={(event) => {
        event.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
