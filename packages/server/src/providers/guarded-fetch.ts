import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { Agent, request as undiciRequest } from 'undici';

/**
 * Fetches a caller-given https URL (an image to pass on as a data URI) without letting the
 * caller reach our private network: every hop's host is resolved and every address checked
 * against private, loopback, link-local and other non-public ranges; the connection is pinned
 * to the checked address (no DNS rebinding between check and connect); redirects are followed
 * by hand, at most `maxRedirects`, each checked again; the body is capped at `maxBytes`.
 */
export class GuardedFetchError extends Error {
  override readonly name = 'GuardedFetchError';
}

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['64:ff9b::', 96],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** True for an address a caller may make us connect to. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped?.[1] !== undefined) return isPublicAddress(mapped[1]);
    return !blocked.check(address, 'ipv6');
  }
  return !blocked.check(address, 'ipv4');
}

export interface GuardedFetchDeps {
  resolve(host: string): Promise<string[]>;
  get(
    url: URL,
    address: string,
    signal: AbortSignal,
  ): Promise<{
    status: number;
    location: string | undefined;
    contentType: string | undefined;
    body: AsyncIterable<Uint8Array> & { destroy?: () => void };
  }>;
}

export const networkDeps: GuardedFetchDeps = {
  async resolve(host) {
    if (isIP(host) !== 0) return [host];
    return (await lookup(host, { all: true })).map((entry) => entry.address);
  },
  async get(url, address, signal) {
    // One agent per fetch, whose only route is the checked address.
    const dispatcher = new Agent({
      connect: {
        lookup: (_host, _options, done) => done(null, [{ address, family: isIP(address) }]),
        timeout: 5_000,
      },
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    const response = await undiciRequest(url, {
      method: 'GET',
      dispatcher,
      signal,
      headers: { accept: 'image/*' },
    });
    const location = response.headers['location'];
    const contentType = response.headers['content-type'];
    return {
      status: response.statusCode,
      location: typeof location === 'string' ? location : undefined,
      contentType: typeof contentType === 'string' ? contentType : undefined,
      body: response.body,
    };
  },
};

export async function guardedFetch(
  input: string,
  options: { maxBytes: number; maxRedirects?: number; timeoutMs?: number },
  deps: GuardedFetchDeps = networkDeps,
): Promise<{ bytes: Buffer; contentType: string | undefined }> {
  const signal = AbortSignal.timeout(options.timeoutMs ?? 15_000);
  let url = new URL(input);
  for (let hop = 0; hop <= (options.maxRedirects ?? 3); hop += 1) {
    if (url.protocol !== 'https:')
      throw new GuardedFetchError(`only https URLs are fetched (${url.protocol} refused)`);
    if (url.username !== '' || url.password !== '')
      throw new GuardedFetchError('URLs with credentials are refused');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses = await deps.resolve(host).catch(() => [] as string[]);
    if (addresses.length === 0) throw new GuardedFetchError(`cannot resolve ${host}`);
    const refused = addresses.find((address) => !isPublicAddress(address));
    if (refused !== undefined)
      throw new GuardedFetchError(`${host} resolves to a private or reserved address; refused`);
    const response = await deps.get(url, addresses[0] ?? '', signal);
    if (response.status >= 300 && response.status < 400 && response.location !== undefined) {
      response.body.destroy?.();
      url = new URL(response.location, url);
      continue;
    }
    if (response.status !== 200) {
      response.body.destroy?.();
      throw new GuardedFetchError(`the URL answered ${response.status}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += chunk.length;
      if (size > options.maxBytes) {
        response.body.destroy?.();
        throw new GuardedFetchError(`the image is larger than ${options.maxBytes} bytes`);
      }
      chunks.push(Buffer.from(chunk));
    }
    return { bytes: Buffer.concat(chunks), contentType: response.contentType };
  }
  throw new GuardedFetchError('too many redirects');
}
