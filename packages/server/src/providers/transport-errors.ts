import { errors as undiciErrors } from 'undici';
import { ApiError } from '../errors/api-error.js';
import { UpstreamFailure } from './upstream-error.js';

/**
 * Errors that can only happen while opening a connection, before any byte of the request left:
 * the upstream refused or cannot be found, its TLS handshake failed (certificate refused, not
 * TLS at all), or this process could not make a socket at all (out of file descriptors, no
 * local port or address). Each is a certain non-delivery. A TLS error that can also happen on
 * an established connection (`EPROTO`, `ECONNRESET` during a read) is not here.
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EMFILE',
  'ENFILE',
  'EADDRNOTAVAIL',
  'EADDRINUSE',
  // TLS handshake failures: the handshake comes before any request byte (docs/routing.md).
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

/** Before the request was sent: `failed`. After (timeouts, resets, oversize): `unknown`. */
export function classifyTransportError(
  error: unknown,
  upstreamRequestId: string | null,
): UpstreamFailure {
  const code = (error as { code?: string }).code ?? '';
  const notSent = error instanceof undiciErrors.ConnectTimeoutError || NOT_SENT_CODES.has(code);
  if (notSent) {
    return new UpstreamFailure(
      'failed',
      new ApiError(
        'MODEL_UNAVAILABLE',
        "the model's upstream cannot be reached; nothing was sent or charged",
      ),
      upstreamRequestId,
      `connect: ${code}`,
    );
  }
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError
  ) {
    return new UpstreamFailure(
      'unknown',
      new ApiError(
        'UPSTREAM_TIMEOUT',
        'the upstream did not answer in time; the outcome is unknown: read the original request, do not send it again',
      ),
      upstreamRequestId,
      `timeout: ${code}`,
    );
  }
  return new UpstreamFailure(
    'unknown',
    new ApiError(
      'UPSTREAM_ERROR',
      'the connection to the upstream broke after the request was sent; the outcome is unknown: read the original request',
    ),
    upstreamRequestId,
    `transport: ${code || (error as Error).message}`,
  );
}
