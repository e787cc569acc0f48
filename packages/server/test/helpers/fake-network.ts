import type { GuardedFetchDeps } from '../../src/net/guarded-fetch.js';
import { dialects } from './dialects.js';
import { startGateway, testConfig, type TestGateway } from './gateway.js';

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

/** The signature of a PNG and a few bytes: what the image checks need, nothing more. */
export const tinyPng = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.alloc(30),
]);

/** A SQLite gateway whose `sim-vision` chat model takes image URLs, fetched through `network`. */
export async function startImageUrlGateway(network: GuardedFetchDeps): Promise<TestGateway> {
  const [sqlite] = dialects;
  if (sqlite === undefined) throw new Error('no sqlite');
  const config = testConfig({
    models: [
      {
        id: 'sim-vision',
        upstream: 'simulator',
        families: ['chat'],
        combinations: [['image_input']],
        prices: { input_per_million_tokens: 1, output_per_million_tokens: 1 },
        image_urls: true,
      },
    ],
  });
  return startGateway(sqlite, { config, services: { fetchDeps: network } });
}
