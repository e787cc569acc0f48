import { isIP } from 'node:net';
import { cidrMatcher, normalizeAddress } from './ip-allowlist.js';

/**
 * The client address a key's allowlist is checked against: the socket's peer, unless that peer
 * is one of `server.trusted_proxies`; then `X-Forwarded-For` is read from the right, skipping
 * trusted proxies, and the first address that is not one is the client. A header from an
 * untrusted peer is ignored (anyone can write one), and an entry that is not an address stops
 * the walk at the last proxy that was trusted (never trusting what it did not vouch for).
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
