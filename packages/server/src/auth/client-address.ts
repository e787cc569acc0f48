import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { cidrMatcher, normalizeAddress } from '../util/ip-allowlist.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The client's address by the gateway's one rule (`clientAddressResolver`). Everything that
     * acts on "where a request came from" reads this and never `request.ip` (the proxy's
     * address behind a proxy): a key's allowlist, the admin-token and console throttles, a
     * console session's recorded address, the audit log's address, the access line.
     */
    readonly clientAddress: string;
  }
}

/**
 * The client address: the socket's peer, unless that peer is one of `server.trusted_proxies`;
 * then `X-Forwarded-For` is read from the right, skipping trusted proxies, and the first address
 * that is not one is the client. A header from an untrusted peer is ignored (anyone can write
 * one), and an entry that is not an address stops the walk at the last proxy that was trusted
 * (never trusting what it did not vouch for).
 */
export function clientAddressResolver(
  trustedProxies: readonly string[],
): (socketAddress: string | undefined, forwardedFor: string | string[] | undefined) => string {
  const trusted = trustedProxies.length === 0 ? () => false : cidrMatcher(trustedProxies);
  return (socketAddress, forwardedFor) => {
    let client = normalizeAddress(socketAddress ?? '');
    if (!trusted(client) || forwardedFor === undefined) return client;
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
      .split(',')
      .map((hop) => hop.trim());
    for (let index = hops.length - 1; index >= 0; index -= 1) {
      const hop = normalizeAddress(hops[index] ?? '');
      if (isIP(hop) === 0) return client;
      client = hop;
      if (!trusted(hop)) return hop;
    }
    return client;
  };
}

/**
 * Gives every request of `app` its `clientAddress` (a getter: worked out only when something
 * asks, from the socket and the request's own `X-Forwarded-For`). Register on the root
 * instance, before any route.
 */
export function registerClientAddress(
  app: FastifyInstance,
  trustedProxies: readonly string[],
): void {
  const resolve = clientAddressResolver(trustedProxies);
  app.decorateRequest('clientAddress', {
    getter(this: FastifyRequest) {
      return resolve(this.raw.socket.remoteAddress, this.headers['x-forwarded-for']);
    },
  });
}
