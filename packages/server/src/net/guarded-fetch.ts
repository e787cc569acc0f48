import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { Agent, request as undiciRequest } from 'undici';
import { isPublicAddress } from './public-address.js';

export { isPublicAddress } from './public-address.js';

/**
 * Fetches a URL we did not choose (a caller's image URL, a result URL in an upstream's answer)
 * without letting it reach our private network: every hop's host is resolved and every address
 * checked against private, loopback, link-local and other non-public ranges; the connection is
 * pinned to the checked address (no DNS rebinding between check and connect); redirects are
 * followed by hand, at most `maxRedirects`, each checked again. The body is streamed and metered
 * (`maxBytes`), its declared length and media type are checked before it is read, and the whole
 * fetch — DNS, every hop, headers and body — is bounded by the caller's `timeoutMs`.
 *
 * Every refusal, the size cap and the timeout are a `GuardedFetchError` (a caller's input
 * error); other failures (connection refused, reset) pass through as they are.
 */
export class GuardedFetchError extends Error {
  override readonly name = 'GuardedFetchError';
}

export interface GuardedFetchDeps {
  resolve(host: string): Promise<string[]>;
  /**
   * One GET to `address` (the checked one) for `url`, aborted by `signal`; `accept` is the
   * Accept header to send. The body is consumed or destroyed by the guard.
   */
  get(
    url: URL,
    address: string,
    signal: AbortSignal,
    accept: string,
  ): Promise<{
    status: number;
    location: string | undefined;
    contentType: string | undefined;
    /** The declared Content-Length, when there is one. */
    contentLength?: number | undefined;
    body: AsyncIterable<Uint8Array> & { destroy?: () => void };
  }>;
}

/** A connection attempt to the checked address is given this long (within the caller's timeout). */
const CONNECT_TIMEOUT_MS = 5_000;

export const networkDeps: GuardedFetchDeps = {
  async resolve(host) {
    if (isIP(host) !== 0) return [host];
    return (await lookup(host, { all: true })).map((entry) => entry.address);
  },
  async get(url, address, signal, accept) {
    // One agent per fetch, whose only route is the checked address. Headers and body have no
    // timeout of their own: the caller's timeout (`signal`) bounds the whole fetch.
    const dispatcher = new Agent({
      connect: {
        lookup: (_host, _options, done) => done(null, [{ address, family: isIP(address) }]),
        timeout: CONNECT_TIMEOUT_MS,
      },
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    const closeAgent = (): void => void dispatcher.destroy().catch(() => undefined);
    try {
      const response = await undiciRequest(url, {
        method: 'GET',
        dispatcher,
        signal,
        headers: { accept },
      });
      response.body.once('close', closeAgent);
      const location = response.headers['location'];
      const contentType = response.headers['content-type'];
      const contentLength = Number(response.headers['content-length'] ?? Number.NaN);
      return {
        status: response.statusCode,
        location: typeof location === 'string' ? location : undefined,
        contentType: typeof contentType === 'string' ? contentType : undefined,
        contentLength: Number.isSafeInteger(contentLength) ? contentLength : undefined,
        body: response.body,
      };
    } catch (error) {
      closeAgent();
      throw error;
    }
  },
};

export interface GuardedStreamOptions {
  /** More bytes than this and the body errors (and its socket is closed). */
  readonly maxBytes: number;
  /** The whole fetch, from DNS to the body's last byte, must finish within this. */
  readonly timeoutMs: number;
  /** Accepted media types (`image/png`); when given, any other Content-Type (or none) is refused. */
  readonly mediaTypes?: readonly string[];
  /** Redirects followed by hand, each checked again (default 3). */
  readonly maxRedirects?: number;
  /** The caller's own abort (e.g. a worker shutting down): ends the fetch with its reason. */
  readonly signal?: AbortSignal;
}

export interface GuardedStream {
  /** The body, metered: consume it or destroy it (either frees the connection and the timer). */
  readonly body: Readable;
  /** The declared media type, lower-case without parameters (`image/png`), if any. */
  readonly contentType: string | undefined;
}

/**
 * Opens a guarded fetch and returns its body as a stream (see the class comment above for the
 * checks). Refused before any byte of the body is read: a Content-Length above `maxBytes`, a
 * Content-Type not in `mediaTypes`. Bytes are pulled from the connection only as the consumer
 * reads, so memory stays at a few chunks whatever the size.
 */
export async function guardedStream(
  input: string,
  options: GuardedStreamOptions,
  deps: GuardedFetchDeps = networkDeps,
): Promise<GuardedStream> {
  const deadline = new AbortController();
  const timer = setTimeout(() => {
    deadline.abort(new GuardedFetchError(`the fetch took longer than ${options.timeoutMs} ms`));
  }, options.timeoutMs);
  const signal =
    options.signal === undefined
      ? deadline.signal
      : AbortSignal.any([deadline.signal, options.signal]);
  try {
    const response = await openChecked(input, options, deps, signal);
    return {
      body: meteredBody(response.body, options.maxBytes, signal, () => clearTimeout(timer)),
      contentType: response.contentType,
    };
  } catch (error) {
    clearTimeout(timer);
    throw signal.aborted ? abortReason(signal) : error;
  }
}

/** Follows the redirects, checking every hop, to a 200 whose headers pass the caller's limits. */
async function openChecked(
  input: string,
  options: GuardedStreamOptions,
  deps: GuardedFetchDeps,
  signal: AbortSignal,
): Promise<{
  body: AsyncIterable<Uint8Array> & { destroy?: () => void };
  contentType: string | undefined;
}> {
  const accept = options.mediaTypes?.join(', ') ?? '*/*';
  let url = new URL(input);
  for (let hop = 0; hop <= (options.maxRedirects ?? 3); hop += 1) {
    if (url.protocol !== 'https:')
      throw new GuardedFetchError(`only https URLs are fetched (${url.protocol} refused)`);
    if (url.username !== '' || url.password !== '')
      throw new GuardedFetchError('URLs with credentials are refused');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // An address literal is checked as it is, never handed to a resolver.
    const lookup = isIP(host) === 0 ? deps.resolve(host) : Promise.resolve([host]);
    const addresses = await untilAborted(lookup, signal).catch((error: unknown) => {
      if (signal.aborted) throw error;
      return [] as string[];
    });
    if (addresses.length === 0) throw new GuardedFetchError(`cannot resolve ${host}`);
    const refused = addresses.find((address) => !isPublicAddress(address));
    if (refused !== undefined)
      throw new GuardedFetchError(`${host} resolves to a private or reserved address; refused`);
    const pending = deps.get(url, addresses[0] ?? '', signal, accept);
    const response = await untilAborted(pending, signal).catch((error: unknown) => {
      // A dependency that answers after the deadline must not leave its body open.
      pending.then((late) => late.body.destroy?.()).catch(() => undefined);
      throw error;
    });
    if (response.status >= 300 && response.status < 400 && response.location !== undefined) {
      response.body.destroy?.();
      url = new URL(response.location, url);
      continue;
    }
    const refusal = refuseBeforeReading(response, options);
    if (refusal !== undefined) {
      response.body.destroy?.();
      throw new GuardedFetchError(refusal);
    }
    return { body: response.body, contentType: mediaTypeOf(response.contentType) };
  }
  throw new GuardedFetchError('too many redirects');
}

/** Why a response is refused from its status and headers alone, or undefined if it is not. */
function refuseBeforeReading(
  response: { status: number; contentType: string | undefined; contentLength?: number | undefined },
  options: GuardedStreamOptions,
): string | undefined {
  if (response.status !== 200) return `the URL answered ${response.status}`;
  if (response.contentLength !== undefined && response.contentLength > options.maxBytes)
    return `the response is larger than ${options.maxBytes} bytes (Content-Length ${response.contentLength})`;
  const mediaType = mediaTypeOf(response.contentType);
  if (options.mediaTypes !== undefined && !options.mediaTypes.includes(mediaType ?? ''))
    return `the URL answered ${mediaType ?? 'no Content-Type'}, expected ${options.mediaTypes.join(' or ')}`;
  return undefined;
}

/** `Image/PNG; charset=x` -> `image/png`. */
function mediaTypeOf(contentType: string | undefined): string | undefined {
  const essence = contentType?.split(';')[0]?.trim().toLowerCase();
  return essence === '' ? undefined : essence;
}

/**
 * The body as a pull stream: one chunk is asked of the source only when the consumer wants
 * more, counted against `maxBytes`; past it, or when `signal` fires, the stream errors with a
 * `GuardedFetchError` and the source is destroyed. `done` runs once, however the stream ends.
 */
function meteredBody(
  source: AsyncIterable<Uint8Array> & { destroy?: () => void },
  maxBytes: number,
  signal: AbortSignal,
  done: () => void,
): Readable {
  const chunks = source[Symbol.asyncIterator]();
  let received = 0;
  const onAbort = (): void => {
    body.destroy(abortReason(signal));
  };
  const body = new Readable({
    read() {
      chunks.next().then(
        (next) => {
          if (body.destroyed) return;
          if (next.done === true) {
            body.push(null);
            return;
          }
          received += next.value.byteLength;
          if (received > maxBytes) {
            body.destroy(new GuardedFetchError(`the response is larger than ${maxBytes} bytes`));
            return;
          }
          body.push(Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength));
        },
        (error: unknown) => {
          body.destroy(signal.aborted ? abortReason(signal) : (error as Error));
        },
      );
    },
    destroy(error, callback) {
      signal.removeEventListener('abort', onAbort);
      done();
      source.destroy?.();
      // Ends a generator source too; a source still busy finishes its current chunk first.
      chunks.return?.().catch(() => undefined);
      callback(error);
    },
  });
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return body;
}

/** Settles with `work`, or rejects as soon as `signal` fires (a dependency may ignore it). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    void work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** What an abort is reported as: our timeout's `GuardedFetchError`, or the caller's own reason. */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new GuardedFetchError('the fetch was aborted');
}

/** The buffered helper's timeout, when its caller gives none (chat's image URLs). */
const BUFFERED_TIMEOUT_MS = 15_000;

/**
 * The whole body in memory, for small bodies (chat's image URLs, turned into data URIs): a thin
 * wrapper over `guardedStream`, with a 15 s timeout unless the caller gives one.
 */
export async function guardedFetch(
  input: string,
  options: Omit<GuardedStreamOptions, 'timeoutMs'> & { readonly timeoutMs?: number },
  deps: GuardedFetchDeps = networkDeps,
): Promise<{ bytes: Buffer; contentType: string | undefined }> {
  const opened = await guardedStream(
    input,
    { ...options, timeoutMs: options.timeoutMs ?? BUFFERED_TIMEOUT_MS },
    deps,
  );
  const chunks: Buffer[] = [];
  for await (const chunk of opened.body) chunks.push(chunk as Buffer);
  return { bytes: Buffer.concat(chunks), contentType: opened.contentType };
}
