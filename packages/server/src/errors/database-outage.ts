import { databaseOutageOf } from '../store/database-outage.js';
import { ApiError } from './api-error.js';

/**
 * Seconds a caller waits before sending again when the database could not be used: a pool opens
 * a fresh connection at once, a restarted or failed-over server takes a few seconds.
 */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function unavailable(message: string): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', message, undefined, {
    'retry-after': String(DATABASE_RETRY_AFTER_SECONDS),
  });
}

/**
 * The answer to a request that met a database it could not use (a lost connection, a server
 * shutting down, SQLite busy or failing I/O: store/database-outage.ts) before anything of it was
 * known to be recorded; `undefined` when `error` is not that. Nothing committed: 503 and send the
 * same request again with the same `Idempotency-Key`. A COMMIT whose answer was lost: 503 saying
 * the outcome is unknown, pointing to where its record would be.
 */
export function databaseUnavailableError(
  error: unknown,
  request: { readonly id: string; readonly idempotencyKey: string | undefined },
): ApiError | undefined {
  const committed = databaseOutageOf(error);
  if (committed === undefined) return undefined;
  const key =
    request.idempotencyKey !== undefined && UUID.test(request.idempotencyKey)
      ? request.idempotencyKey
      : undefined;
  if (committed === 'no')
    return unavailable(
      key === undefined
        ? 'the gateway could not use its database and nothing of this request was committed: send it again after Retry-After seconds'
        : 'the gateway could not use its database and nothing of this request was committed: send the same request again, with the same Idempotency-Key, after Retry-After seconds',
    );
  return unavailable(
    key === undefined
      ? 'the gateway lost its database connection while committing this request: whether it took effect is unknown; read what it changes before sending it again'
      : `the gateway lost its database connection while committing this request: whether it was recorded is unknown. Read GET /v1/requests?idempotency_key=${key} (its record, if any, is ${request.id}) before anything else; sent again with the same Idempotency-Key it never runs twice`,
  );
}

/**
 * The answer when the outcome of a request already claimed (its record `processing`, its hold
 * taken, the upstream's work done) could not be recorded because the database could not be
 * used; `undefined` when `error` is not that. The record stays `processing`, its hold kept,
 * until the sweeper takes it (docs/requests.md); sending it again with the same key answers
 * from that record, never runs it twice.
 */
export function outcomeNotRecorded(error: unknown, recordId: string): ApiError | undefined {
  const committed = databaseOutageOf(error);
  if (committed === undefined) return undefined;
  return unavailable(
    committed === 'no'
      ? `the gateway could not use its database to record the outcome of this request: it was not recorded. Read GET /v1/requests/${recordId} later: it stays processing, its hold kept, until the gateway reconciles it; sent again with the same Idempotency-Key it never runs twice`
      : `the gateway lost its database connection while recording the outcome of this request: whether it was recorded is unknown. Read GET /v1/requests/${recordId}; sent again with the same Idempotency-Key it never runs twice`,
  );
}
