import { ApiError } from '../errors/api-error.js';
import { canonicalJson, sha256Hex } from '../util/canonical-json.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Reads the required `Idempotency-Key` header: a UUID, as the spec asks callers to generate. */
export function readIdempotencyKey(headers: Record<string, string | string[] | undefined>): string {
  const value = headers['idempotency-key'];
  if (value === undefined)
    throw new ApiError(
      'INVALID_INPUT',
      'Idempotency-Key header is required on every business POST (a new UUID per request)',
      'Idempotency-Key',
    );
  if (typeof value !== 'string' || !UUID.test(value))
    throw new ApiError('INVALID_INPUT', 'Idempotency-Key must be a UUID', 'Idempotency-Key');
  return value.toLowerCase();
}

/** Method + route + canonical body: the same logical request always gets the same fingerprint. */
export function fingerprint(method: string, route: string, body: unknown): string {
  return sha256Hex(`${method} ${route}\n${canonicalJson(body ?? null)}`);
}
