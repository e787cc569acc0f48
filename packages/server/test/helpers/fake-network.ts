import type { GuardedFetchDeps } from '../../src/providers/guarded-fetch.js';

/** A fake network: DNS answers from a table, servers from a table; nothing leaves the process. */
export function fakeNetwork(
  dns: Record<string, string[]>,
  pages: Record<string, { status: number; location?: string; body?: Buffer }>,
): GuardedFetchDeps & { fetched: string[] } {
  const fetched: string[] = [];
  return {
    fetched,
    resolve: (host) => Promise.resolve(dns[host] ?? []),
    get: (url, address) => {
      fetched.push(`${url.href} @ ${address}`);
      const page = pages[url.href] ?? { status: 404 };
      return Promise.resolve({
        status: page.status,
        location: page.location,
        contentType: 'image/png',
        body: (async function* () {
          if (page.body !== undefined) yield page.body;
        })(),
      });
    },
  };
}
