import { guardedStream, networkDeps, type GuardedFetchDeps } from '../net/guarded-fetch.js';
import type { TaskOutputSource } from './task-provider.js';
import type { UpstreamClient } from './upstream-http.js';

/**
 * An output an upstream gives as a URL (an image or video result): one under the upstream's own
 * base URL is read with the upstream's client (its key, its pool); any other origin only through
 * the guarded fetch (public hosts only, `maxBytes` metered, `mediaTypes` checked by label — the
 * stored bytes are probed afterwards anyway), opened only when the worker stores it.
 */
export function resultUrlSource(
  url: string,
  upstream: { readonly http: UpstreamClient; readonly baseUrl: string },
  foreign: {
    readonly maxBytes: number;
    readonly mediaTypes: readonly string[];
    readonly timeoutMs: number;
    readonly deps?: GuardedFetchDeps | undefined;
  },
): TaskOutputSource {
  return {
    url,
    open: async (signal) => {
      const base = new URL(upstream.baseUrl);
      const parsed = new URL(url);
      const basePath = base.pathname.replace(/\/$/, '');
      if (parsed.origin === base.origin && parsed.pathname.startsWith(`${basePath}/`)) {
        const binary = await upstream.http.getBinary(
          parsed.pathname.slice(basePath.length) + parsed.search,
          signal,
        );
        return { body: binary.body, mediaType: binary.mediaType };
      }
      const fetched = await guardedStream(
        url,
        {
          maxBytes: foreign.maxBytes,
          mediaTypes: foreign.mediaTypes,
          timeoutMs: foreign.timeoutMs,
          ...(signal === undefined ? {} : { signal }),
        },
        foreign.deps ?? networkDeps,
      );
      return { body: fetched.body, mediaType: fetched.contentType ?? null };
    },
  };
}
