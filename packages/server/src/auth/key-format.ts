import { hash, randomBytes } from 'node:crypto';

/**
 * API key format: `tgk_` + 43 base62 characters carrying 256 random bits + 6 base62 characters
 * of CRC-32 checksum over the random part. The prefix makes leaked keys easy to find with secret
 * scanners; the checksum lets us refuse a mistyped or made-up key without a database lookup.
 */
export const KEY_PREFIX = 'tgk_';
const RANDOM_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);
/** Finds something that looks like one of our keys anywhere in a string (used on URLs). */
export const KEY_LIKE = /tgk_[0-9A-Za-z]{20,}/;

function toBase62(value: bigint, length: number): string {
  let text = '';
  let rest = value;
  for (let index = 0; index < length; index += 1) {
    text = BASE62[Number(rest % 62n)] + text;
    rest /= 62n;
  }
  return text;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, index) => {
  let crc = index;
  for (let bit = 0; bit < 8; bit += 1) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  return crc >>> 0;
});

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let index = 0; index < text.length; index += 1) {
    crc = (CRC_TABLE[(crc ^ text.charCodeAt(index)) & 0xff] ?? 0) ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function checksum(randomPart: string): string {
  return toBase62(BigInt(crc32(randomPart)), CHECKSUM_LENGTH);
}

/** A new key: 256 bits from the CSPRNG, encoded exactly (43 base62 digits hold 2^256). */
export function generateApiKey(): string {
  const random = toBase62(BigInt(`0x${randomBytes(32).toString('hex')}`), RANDOM_LENGTH);
  return `${KEY_PREFIX}${random}${checksum(random)}`;
}

/** Shape and checksum only; says nothing of whether the key exists. */
export function isWellFormedKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const random = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + RANDOM_LENGTH);
  return checksum(random) === key.slice(KEY_PREFIX.length + RANDOM_LENGTH);
}

/** What is stored: the hex SHA-256 of the whole key. 256-bit keys need no slow hash. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}
