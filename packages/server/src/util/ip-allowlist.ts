import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * CIDR lists: a key's `allowed_ips` and the server's `trusted_proxies` (docs/security.md, "IP
 * allowlists"). Matching is node:net's BlockList. An IPv4-mapped IPv6 address or block
 * (`::ffff:10.1.2.3`, `::ffff:10.0.0.0/104`) is taken as the IPv4 one, so a dual-stack socket's
 * address matches an IPv4 rule and the other way round.
 */

/** At most this many blocks in one list. */
export const MAX_CIDRS = 100;

const MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** `address` with an IPv4-mapped IPv6 form turned into IPv4; anything else unchanged. */
export function normalizeAddress(address: string): string {
  const mapped = MAPPED.exec(address);
  return mapped?.[1] !== undefined && isIPv4(mapped[1]) ? mapped[1] : address;
}

interface Block {
  readonly network: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/** One block, `ADDRESS` or `ADDRESS/PREFIX`, or `undefined` when it is not one. */
function parseBlock(text: string): Block | undefined {
  const [rawNetwork, rawPrefix, extra] = text.trim().split('/');
  if (rawNetwork === undefined || extra !== undefined) return undefined;
  if (rawPrefix !== undefined && !/^\d{1,3}$/.test(rawPrefix)) return undefined;
  let network = rawNetwork;
  let prefix = rawPrefix === undefined ? undefined : Number(rawPrefix);
  const mapped = MAPPED.exec(network);
  if (mapped?.[1] !== undefined && isIPv4(mapped[1])) {
    if (prefix !== undefined && prefix < 96) return undefined;
    network = mapped[1];
    prefix = prefix === undefined ? undefined : prefix - 96;
  }
  const family = isIPv4(network) ? 'ipv4' : isIPv6(network) ? 'ipv6' : undefined;
  if (family === undefined) return undefined;
  const bits = family === 'ipv4' ? 32 : 128;
  prefix ??= bits;
  if (prefix > bits) return undefined;
  return { network, prefix, family };
}

/**
 * Validates a list of CIDR blocks; returns them in canonical text (`10.0.0.0/8`), or the reason
 * it is refused (the caller names the field).
 */
export function parseCidrList(value: unknown): { cidrs: string[] } | { problem: string } {
  if (!Array.isArray(value)) return { problem: 'must be an array of CIDR blocks' };
  if (value.length === 0)
    return { problem: 'must name at least one block (null allows every address)' };
  if (value.length > MAX_CIDRS) return { problem: `must have at most ${MAX_CIDRS} blocks` };
  const cidrs: string[] = [];
  for (const [index, item] of value.entries()) {
    const block = typeof item === 'string' && item.length <= 64 ? parseBlock(item) : undefined;
    if (block === undefined)
      return {
        problem: `item ${index} is not a CIDR block such as 203.0.113.0/24 or 2001:db8::/32`,
      };
    cidrs.push(`${block.network}/${block.prefix}`);
  }
  return { cidrs: [...new Set(cidrs)] };
}

/** A matcher for blocks already validated by `parseCidrList`. */
export function cidrMatcher(cidrs: readonly string[]): (address: string) => boolean {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const block = parseBlock(cidr);
    if (block !== undefined) list.addSubnet(block.network, block.prefix, block.family);
  }
  return (address) => {
    const normalized = normalizeAddress(address);
    if (isIPv4(normalized)) return list.check(normalized, 'ipv4');
    if (isIPv6(normalized)) return list.check(normalized, 'ipv6');
    return false;
  };
}
